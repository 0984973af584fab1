// A VM behind a proxy (handlers/common/apt-proxy.ts, lib/shared/apt-proxy.ts): the URL rule over the class of
// inputs, the proxy file as a planned change every installer gets from the kit (first, foreseen by a
// check, written only when it differs, removed with the setting), the key fetch taking apt's proxy, and
// apt-get update's unreachable-mirror lines.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Apt } from "../../handlers/common/apt";
import { unreachableFetches } from "../../handlers/common/apt-output";
import { APT_PROXY_FILE, aptProxyContent, keyFetchProxy } from "../../handlers/common/apt-proxy";
import { BOOT_LOOK } from "../../handlers/common/boot-look";
import type { Connection, RunOptions, RunResult } from "../../handlers/common/exec";
import { defineHandler, runHandler } from "../../handlers/common/handler-kit";
import type { InstallerModel } from "../../handlers/common/installer-model";
import type { InstallerReport } from "../../handlers/common/installer-result";
import { aptProxyProblem } from "../../lib/shared/apt-proxy";
import { defineInstallerDefinition } from "../../lib/shared/installer-definition";
import { SecretScrubber } from "../../lib/shared/secrets";
import { type EventOf, setting } from "../../lib/shared/settings";
import { integer } from "../../lib/shared/validate";
import { DEBIAN_12 } from "./support/fixtures";
import { answerLook } from "./support/look-answers";
import { renameOf } from "./support/remote-writes";
import { TEST_ENV } from "./support/run-scripted";
import { ScriptedRemote } from "./support/scripted-remote";

describe("the aptProxy rule", () => {
  it.each([
    "http://10.200.1.1:3142",
    "http://proxy.corp.example:3128/",
    "https://proxy.example.com",
    "http://[fd00::1]:8080",
    "http://[::1]:3142/",
    "HTTP://proxy:3128".toLowerCase(),
  ])("accepts %s", (url) => expect(aptProxyProblem(url)).toBeUndefined());

  it.each([
    ["http://user:secret@proxy:3128", /credentials/],
    ["http://user@proxy:3128", /credentials/],
    ["https://a:b@[::1]:1", /credentials/],
    ["ftp://proxy:21", /not http:\/\/host:port/],
    ["socks5://proxy:1080", /not http:\/\/host:port/],
    ["proxy:3128", /not http:\/\/host:port/],
    ["http://proxy:3128/path", /not http:\/\/host:port/],
    ["http://proxy:3128/?x=1", /not http:\/\/host:port/],
    ['http://proxy:3128";\nAcquire::http::Proxy "http://evil', /not http:\/\/host:port/],
    ['http://proxy"', /not http:\/\/host:port/],
    ["http://proxy :3128", /not http:\/\/host:port/],
    ["http://$(reboot):1", /not http:\/\/host:port/],
    ["http://proxy:0", /port 0/],
    ["http://proxy:65536", /port 65536/],
    ["http://0x7f000001:3128", /not an IPv4 address/],
    ["http://-bad-.example:1", /not an IPv4 address/],
    ["http://[not:v6:zz]:1", /not http:\/\/host:port|not an IPv4/],
    ["http://", /not http:\/\/host:port/],
  ])("refuses %j", (url, why) => expect(aptProxyProblem(url)).toMatch(why));
});

/** A VM that holds the proxy file and a counter; logs every command the job sends. */
class ProxyVm implements Connection {
  readonly target = "ubuntu@192.0.2.10:22";
  readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`;
  file: string | undefined;
  level = 0;
  readonly log: string[] = [];

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    const ok = (stdout = "") => ({ code: 0, stdout, stderr: "", durationMs: 0 });
    const file = this.file === undefined ? { code: 3 } : this.file;
    // The kit's boot look reads the file with os-release and cloud-init: one look at it.
    if (command === BOOT_LOOK.script) {
      this.log.push(`look: ${APT_PROXY_FILE} (the boot look)`);
      return ok(answerLook(command, { os_release: DEBIAN_12, apt_proxy: file }));
    }
    const write = command.includes(renameOf(APT_PROXY_FILE));
    const what = write ? `write ${APT_PROXY_FILE}` : command.slice(0, 60);
    this.log.push(`${opts.mutates ? "change" : "look"}${opts.sudo ? " (sudo)" : ""}: ${what}`);
    if (write) this.file = String(opts.stdin);
    else if (command.startsWith("rm -f ")) this.file = undefined;
    else if (command === "raise") this.level++;
    return ok(command === "get" ? String(this.level) : "");
  }

  async close(): Promise<void> {}
}

const definition = defineInstallerDefinition({
  key: "levels",
  handler: "install-levels",
  doc: "raises a level",
  enabledByDefault: false,
  waitTimeoutSec: 60,
  settings: { level: setting(integer(0, 5), { event: "level", default: 2, doc: "The level wanted." }) },
  result: {},
});
type Event = EventOf<typeof definition.settings>;

/** One raise per change, each asking to replan: the proxy file must not be looked at again for those. */
const model: InstallerModel<Event, { level: number }> = {
  inspect: async ({ remote }) => ({ level: Number((await remote.run("get")).stdout) }),
  plan: (state, event) =>
    state.level < event.level
      ? [
          {
            kind: "raise",
            what: [`raised to ${state.level + 1}`],
            why: "low",
            replan: true,
            apply: async ({ remote }) => void (await remote.run("raise", { mutates: true })),
          },
        ]
      : [],
  report: (run) => ({ status: "ok", summary: `level ${run.state.level}, ${run.applied.length} raise(s)` }),
};

async function job(vm: ProxyVm, event: Record<string, unknown>) {
  const handler = defineHandler<typeof definition.settings, InstallerReport>({ definition, model });
  return runHandler(handler, event, {
    env: TEST_ENV,
    connect: async () => vm,
    write: () => undefined,
    secrets: new SecretScrubber(),
  });
}

const URL_ = "http://10.200.1.1:3142";
const WROTE = `wrote ${APT_PROXY_FILE} (apt through ${URL_})`;
const REMOVED = `removed ${APT_PROXY_FILE} (no aptProxy set: apt goes direct)`;

describe("the proxy file, a change every installer plans first", () => {
  it("a check foresees it and writes nothing; the run writes it before the installer's own changes", async () => {
    const vm = new ProxyVm();
    const check = await job(vm, { level: 2, apt_proxy: URL_, check: true });
    expect(check.would_change).toEqual([WROTE, "raised to 1"]);
    expect(vm.file).toBeUndefined();
    expect(vm.log.filter((l) => l.startsWith("change"))).toEqual([]);

    vm.log.length = 0;
    const run = await job(vm, { level: 2, apt_proxy: URL_ });
    expect(run.changes).toEqual([WROTE, "raised to 1", "raised to 2"]);
    expect(vm.file).toBe(aptProxyContent(URL_));
    expect(vm.file).toContain(`Acquire::http::Proxy "${URL_}";\nAcquire::https::Proxy "${URL_}";\n`);
    // Written first, as root, the content on stdin; the file looked at once though the plan was made three times.
    const changes = vm.log.filter((l) => l.startsWith("change"));
    expect(changes[0]).toBe(`change (sudo): write ${APT_PROXY_FILE}`);
    expect(vm.log.filter((l) => l.startsWith("look") && l.includes("90vm-install-proxy"))).toHaveLength(1);
    // The installer's report sees only its own changes.
    expect(run.summary).toBe("level 2, 2 raise(s)");
  });

  it("as asked: nothing written; another URL: rewritten; the setting gone: removed, foreseen by a check", async () => {
    const vm = new ProxyVm();
    vm.level = 2;
    vm.file = aptProxyContent(URL_);
    const same = await job(vm, { level: 2, apt_proxy: URL_ });
    expect(same.changes).toEqual([]);
    expect(vm.log.filter((l) => l.startsWith("change"))).toEqual([]);

    const other = "http://proxy.example:3128";
    expect((await job(vm, { level: 2, apt_proxy: other })).changes).toEqual([
      `wrote ${APT_PROXY_FILE} (apt through ${other})`,
    ]);
    expect(vm.file).toBe(aptProxyContent(other));

    const check = await job(vm, { level: 2, check: true });
    expect(check.would_change).toEqual([REMOVED]);
    expect(vm.file).toBe(aptProxyContent(other));
    expect((await job(vm, { level: 2 })).changes).toEqual([REMOVED]);
    expect(vm.file).toBeUndefined();
    vm.log.length = 0;
    expect((await job(vm, { level: 2 })).changes).toEqual([]);
    expect(vm.log.filter((l) => l.startsWith("change"))).toEqual([]);
  });

  it("a hand-edited file is put back as the setting says", async () => {
    const vm = new ProxyVm();
    vm.level = 2;
    vm.file = `${aptProxyContent(URL_)}Acquire::http::Proxy::deb.debian.org "DIRECT";\n`;
    expect((await job(vm, { level: 2, apt_proxy: URL_ })).changes).toEqual([WROTE]);
    expect(vm.file).toBe(aptProxyContent(URL_));
  });

  it("a bad apt_proxy is refused before anything is sent to the VM", async () => {
    const vm = new ProxyVm();
    await expect(job(vm, { level: 2, apt_proxy: "http://u:p@proxy:3128" })).rejects.toThrow(
      /event apt_proxy: .* holds credentials/,
    );
    expect(vm.log).toEqual([]);
  });
});

describe("the key fetch takes apt's proxy", () => {
  /** Runs keyFetchProxy's snippet in a real sh with an apt-config that answers `answer`; prints the env. */
  function proxiesAfter(keyUrl: string, answer: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "apt-config-"));
    try {
      fs.writeFileSync(path.join(dir, "apt-config"), `#!/bin/sh\necho "$3" >> "${dir}/asked"\n${answer}\n`, {
        mode: 0o755,
      });
      const script = `${keyFetchProxy(keyUrl)}echo "http=\${http_proxy-unset} https=\${https_proxy-unset}"`;
      const env = { PATH: `${dir}:/usr/bin:/bin` };
      return `${execFileSync("sh", ["-c", script], { env, encoding: "utf8" }).trim()} asked=${fs.readFileSync(path.join(dir, "asked"), "utf8").trim()}`;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it("exports the scheme's proxy from apt's configuration, in the environment, not on curl's command line", () => {
    expect(proxiesAfter("https://download.docker.com/linux/debian/gpg", `echo "P='${URL_}'"`)).toBe(
      `http=unset https=${URL_} asked=Acquire::https::Proxy`,
    );
    expect(proxiesAfter("http://apt.example/key.asc", `echo "P='${URL_}'"`)).toBe(
      `http=${URL_} https=unset asked=Acquire::http::Proxy`,
    );
    expect(keyFetchProxy("https://x.example/k")).not.toMatch(/--proxy/);
  });

  it("no proxy, or DIRECT, leaves curl to the login environment", () => {
    expect(proxiesAfter("https://x.example/k", "true")).toBe("http=unset https=unset asked=Acquire::https::Proxy");
    expect(proxiesAfter("https://x.example/k", `echo "P='DIRECT'"`)).toBe(
      "http=unset https=unset asked=Acquire::https::Proxy",
    );
    // What apt-config prints is shell-quoted by apt: a value with shell words stays a value.
    expect(proxiesAfter("https://x.example/k", `echo "P='\\$(touch /tmp/x); a'"`)).toBe(
      "http=unset https=$(touch /tmp/x); a asked=Acquire::https::Proxy",
    );
  });
});

describe("apt-get update's unreachable servers", () => {
  const OUT = [
    "Err:1 http://deb.debian.org/debian bookworm InRelease",
    "  Temporary failure resolving 'deb.debian.org'",
    "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving " +
      "'deb.debian.org'",
    "W: Failed to fetch http://10.0.0.9/debian/dists/bookworm/InRelease  Could not connect to 10.0.0.9:80 " +
      "(10.0.0.9) - connect (113: No route to host)",
    "W: Failed to fetch http://repo.example/dists/x/InRelease  404  Not Found [IP: 192.0.2.1 80]",
    "W: Some index files failed to download. They have been ignored, or old ones used instead.",
  ].join("\n");

  it("names each server apt could not reach, not a repository that answered 404", () => {
    expect(unreachableFetches(OUT)).toEqual([
      "http://deb.debian.org/debian/dists/bookworm/InRelease: Temporary failure resolving 'deb.debian.org'",
      "http://10.0.0.9/debian/dists/bookworm/InRelease: Could not connect to 10.0.0.9:80 (10.0.0.9) - connect " +
        "(113: No route to host)",
    ]);
    expect(
      unreachableFetches("Hit:1 http://deb.debian.org/debian bookworm InRelease\nReading package lists..."),
    ).toEqual([]);
  });

  const update = (stdout: string, stderr = "") =>
    new Apt(new ScriptedRemote([{ match: "apt-get update -q", sudo: true, stdout, stderr }])).update();

  it("an update that reached none of the sources fails naming them and the proxy the step ran with", async () => {
    const note = "vm-install: step job-0123456789ab ran without a proxy in its environment";
    const err = `${OUT.split("\n")
      .filter((l) => !l.includes("404"))
      .join("\n")}\n${note}`;
    await expect(update("Reading package lists...\n", err)).rejects.toThrow(
      new RegExp(
        "^apt-get update could not reach deb\\.debian\\.org, 10\\.0\\.0\\.9 from the VM: " +
          "http://deb\\.debian\\.org/debian/dists/bookworm/InRelease: Temporary failure resolving 'deb\\.debian\\.org'; " +
          ".*; the step ran without a proxy in its environment\\. Nothing was installed\\..*set the VM's aptProxy",
      ),
    );
  });

  it("one unreachable source among sources that answered stays apt's warning", async () => {
    const hit = "Hit:1 http://deb.debian.org/debian bookworm InRelease\nReading package lists...\n";
    await expect(update(hit, OUT)).resolves.toMatchObject({ ran: true });
    await expect(
      update("Get:1 http://deb.debian.org/debian bookworm InRelease [151 kB]\n", OUT),
    ).resolves.toMatchObject({
      ran: true,
    });
  });
});
