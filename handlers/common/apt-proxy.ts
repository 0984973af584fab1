// The VM's apt proxy (event `apt_proxy`, from vms[].aptProxy) as a planned change every installer gets from
// the kit: a file in apt.conf.d, not a command-line option, so every apt the job starts reads it, detached
// steps in their systemd units included, and so does the key fetch (apt-repository.ts asks apt-config).
// Written only when it differs, removed when the setting is gone: only this one file, which vm-install owns.

import { quote } from "../../lib/shared/shell-quote";
import type { CommonEvent } from "./handler-input";
import type { Applied, ApplyOutcome, Change, InstallerModel, ModelRun } from "./installer-model";
import type { InstallerReport } from "./installer-result";
import { writeRemoteFile } from "./remote-file";
import { type RootFact, rootFact } from "./vm-facts";

/** Read after the distribution's own files (apt reads apt.conf.d in order), so this proxy wins over theirs. */
export const APT_PROXY_FILE = "/etc/apt/apt.conf.d/90vm-install-proxy";
const APT_PROXY_KIND = "apt-proxy";

/** The file's whole content for `url` (already checked by lib/shared/apt-proxy.ts: no quotes, no credentials). */
export function aptProxyContent(url: string): string {
  return [
    "// Written by vm-install from the VM's aptProxy setting; it removes this file when the setting goes.",
    "// Change the setting, not this file: the next job writes it back.",
    `Acquire::http::Proxy "${url}";`,
    `Acquire::https::Proxy "${url}";`,
    "",
  ].join("\n");
}

/**
 * The look at the file every job makes (in the kit's boot look): exit 3 when there is none. No sudo: the
 * file is world-readable (apt's methods read it as _apt); one that is not reads as "" and is rewritten.
 */
export const APT_PROXY_PROBE = {
  name: "apt_proxy",
  command: `if [ -e ${quote(APT_PROXY_FILE)} ]; then cat ${quote(APT_PROXY_FILE)}; else exit 3; fi`,
  writer: "root",
  use: "rewrite or remove the apt proxy file only when it differs from the setting",
} as const;

/** The file's content from the probe's answer, or undefined when there is none (root writes or removes it). */
export function proxyFileFrom(fact: RootFact): string | undefined {
  const f = rootFact(fact, `the rewrite of ${APT_PROXY_FILE}`);
  return f.code === 3 ? undefined : f.text;
}

/** The file's content `url` asks for: none without a proxy. */
const wantedFile = (url: string | undefined) => (url === undefined ? undefined : aptProxyContent(url));

/** The change that makes the file what `url` asks for, or none when it already is. Pure. */
function planAptProxy(current: string | undefined, url: string | undefined): Change[] {
  const f = quote(APT_PROXY_FILE);
  if (url === undefined) {
    if (current === undefined) return [];
    return [
      {
        kind: APT_PROXY_KIND,
        what: [`removed ${APT_PROXY_FILE} (no aptProxy set: apt goes direct)`],
        why: `${APT_PROXY_FILE} is there but no aptProxy is set`,
        apply: async ({ remote }) =>
          void (await remote.run(`rm -f ${f}`, { sudo: true, mutates: true, label: `removing ${APT_PROXY_FILE}` })),
      },
    ];
  }
  const wanted = aptProxyContent(url);
  if (current === wanted) return [];
  return [
    {
      kind: APT_PROXY_KIND,
      what: [`wrote ${APT_PROXY_FILE} (apt through ${url})`],
      why: current === undefined ? `no ${APT_PROXY_FILE}` : `${APT_PROXY_FILE} differs from aptProxy ${url}`,
      // Renamed into place (remote-file.ts): an apt starting meanwhile reads the old file or the new, never half.
      apply: async ({ remote }) =>
        void (await writeRemoteFile(remote, { path: APT_PROXY_FILE, content: wanted, writer: "root", mode: "0644" })),
    },
  ];
}

/** An installer's state with the proxy file's beside it. */
export interface WithProxy<S> {
  proxyFile: string | undefined;
  inner: S;
}

const own = (a: Applied<unknown, ApplyOutcome>) => a.change.kind !== APT_PROXY_KIND;

/** The run as the installer sees it: its own state and changes, not the proxy's. */
function innerRun<S, E, O extends ApplyOutcome, V>(run: ModelRun<WithProxy<S>, E, O, V>): ModelRun<S, E, O, V> {
  return {
    ...run,
    before: run.before.inner,
    state: run.state.inner,
    planned: run.planned.filter((c) => c.kind !== APT_PROXY_KIND),
    applied: run.applied.filter(own),
  };
}

/**
 * `model` with the proxy file planned first, before any of its own apt work; its inspect, verify and
 * report see only their own state and changes. The kit wraps every installer's model in this.
 */
export function withAptProxy<E, S, R extends InstallerReport, O extends ApplyOutcome, V>(
  model: InstallerModel<E, S, R, O, V>,
  seen: { file: string | undefined },
): InstallerModel<E, WithProxy<S>, R, O, V> {
  return {
    firstLook: (event) => model.firstLook?.(event) ?? [],
    async inspect(ctx) {
      const { previous } = ctx;
      // Looked at once, in the kit's boot look: after a replan the file is what the proxy change made
      // it, or as it was.
      const proxyFile = !previous
        ? seen.file
        : previous.applied.some((a) => !own(a))
          ? wantedFile(ctx.event.apt_proxy)
          : previous.state.proxyFile;
      const inner = previous && { state: previous.state.inner, applied: previous.applied.filter(own) };
      return { proxyFile, inner: await model.inspect({ ...ctx, previous: inner }) };
    },
    plan(state, event) {
      const inner = model.plan(state.inner, event);
      const own = planAptProxy(state.proxyFile, (event as CommonEvent).apt_proxy) as Change<E, O>[];
      return Array.isArray(inner) ? [...own, ...inner] : { ...inner, changes: [...own, ...inner.changes] };
    },
    ...(model.verify ? { verify: (ctx, run) => model.verify!(ctx, innerRun(run)) } : {}),
    ...(model.verifyReadsOnly ? { verifyReadsOnly: true } : {}),
    report: (run) => model.report(innerRun(run)),
  };
}

/**
 * The proxy apt is configured with for the key URL's scheme (this file, or the VM's own apt.conf), for
 * apt-repository.ts's key fetch: handed to curl in its environment, never on its command line, where `ps`
 * shows a proxy's credentials. Unset or DIRECT: curl goes as the login environment says.
 */
export function keyFetchProxy(keyUrl: string): string {
  const scheme = keyUrl.startsWith("https:") ? "https" : "http";
  return (
    `P=; eval "$(apt-config shell P Acquire::${scheme}::Proxy 2>/dev/null)"; ` +
    `case "$P" in ""|DIRECT) ;; *) export ${scheme}_proxy="$P";; esac; `
  );
}
