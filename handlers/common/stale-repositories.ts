// Older set-ups of the same repository (other source files, legacy keyrings, keys in apt-key's
// trusted.gpg) found and removed, so apt sees exactly one source and one key for it. Only entries
// whose URI matches are touched; a file holding other entries keeps them. A check plans the same and says
// the removal's lines without acting.
import { REPO_URL } from "../../lib/shared/names";
import { quote } from "../../lib/shared/shell-quote";
import { KEYRINGS_DIR, SOURCES_DIR, supersededKeyrings } from "./apt-repository";
import { removable, type SourceFile, sourcesListingFrom, sourcesLook } from "./apt-sources-look";
import type { Remote } from "./exec";
import { type Progress, stepIf } from "./progress";
import { writeFragment } from "./remote-file";

export interface StaleRepositoryOptions {
  /** The repository's URIs (the scheme is ignored: an old http:// entry is the same repository). */
  uris: string[];
  /** What ensureAptRepository wrote: never touched. */
  keep: { sources: string[]; keyrings: string[] };
  /**
   * Keyring files of older set-ups of this repository, removed when nothing left uses them. What earlier
   * versions of ensureAptRepository wrote for a kept keyring (<name>.asc beside <name>.gpg) is added here.
   */
  keyrings?: string[];
  /** Key fingerprints that older set-ups (`apt-key add`) put into /etc/apt/trusted.gpg, removed from it. */
  trustedFingerprints?: string[];
}

export interface StaleRepositoryOutcome {
  changed: boolean;
  /** One line per change ("removed /etc/apt/sources.list.d/docker-ce.list", ...). */
  changes: string[];
}

/** What to do about the stale entries, worked out from the files (pure, for the tests). */
export interface StalePlan {
  /** Files with nothing but stale entries. */
  remove: string[];
  /**
   * Files with stale and other entries: their new text (stale one-line entries commented out, stale
   * deb822 stanzas dropped).
   */
  rewrite: { path: string; text: string }[];
  /** Keyrings the stale entries used (plus the legacy ones), not used by anything that stays. */
  keyrings: string[];
}

/** "host/path" in lower case without scheme and trailing slashes, for comparing repository URIs. */
export function normalizeUri(uri: string): string {
  return uri
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, "")
    .replace(/\/+$/, "")
    .toLowerCase();
}

const ONE_LINE = /^\s*(deb|deb-src)\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+\S+/;

/** The signed-by keyring paths of a one-line entry's option list ("arch=amd64 signed-by=/k.asc"). */
function signedByOf(options: string | undefined): string[] {
  if (!options) return [];
  const m = /(?:^|\s)signed-by=(\S+)/.exec(options);
  return m ? m[1].split(",").filter((v) => v.startsWith("/")) : [];
}

interface Entry {
  stale: boolean;
  keyrings: string[];
}

/** deb822 stanzas: blocks separated by blank lines; continuation lines start with a space. */
function stanzas(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((s) => s.replace(/^\n+|\n+$/g, ""))
    .filter((s) => s.trim() !== "");
}

function deb822Field(stanza: string, field: string): string | undefined {
  const lines = stanza.split("\n");
  const i = lines.findIndex((l) => l.toLowerCase().startsWith(`${field.toLowerCase()}:`));
  if (i < 0) return undefined;
  let value = lines[i].slice(field.length + 1);
  for (let j = i + 1; j < lines.length && /^[ \t]/.test(lines[j]); j++) value += `\n${lines[j]}`;
  return value.trim();
}

function isEntryStanza(stanza: string): boolean {
  return stanza.split("\n").some((l) => /^[A-Za-z-]+:/.test(l));
}

/** What planning one file needs: the URIs that make an entry stale, and the keyrings seen so far. */
interface FilePlanning {
  wanted: Set<string>;
  kept: boolean;
  plan: StalePlan;
  staleKeyrings: Set<string>;
  usedKeyrings: Set<string>;
  /** The sources that supersede the stale entries (named in a disabled line). */
  keepSources: string[];
}

/**
 * Finds every entry for `uris` outside `keep.sources` and decides, per file, whether it goes entirely
 * (only stale entries in it) or is rewritten without them. /etc/apt/sources.list is never removed:
 * its stale lines are commented out, so the user sees where they went.
 */
export function planStaleRemoval(files: SourceFile[], opts: StaleRepositoryOptions): StalePlan {
  const keepSources = new Set(opts.keep.sources);
  const plan: StalePlan = { remove: [], rewrite: [], keyrings: [] };
  const staleKeyrings = new Set<string>(opts.keyrings ?? []);
  const usedKeyrings = new Set<string>(opts.keep.keyrings);
  const wanted = new Set(opts.uris.map(normalizeUri));
  for (const file of files) {
    const planning = { wanted, kept: keepSources.has(file.path), plan, staleKeyrings, usedKeyrings };
    const ctx = { ...planning, keepSources: opts.keep.sources };
    if (file.path.endsWith(".sources")) planDeb822File(file, ctx);
    else planOneLineFile(file, ctx);
  }
  // Only keyrings in apt's own places, and never one that something staying still uses.
  const places = [`${KEYRINGS_DIR}/`, "/usr/share/keyrings/", "/etc/apt/trusted.gpg.d/"];
  plan.keyrings = [...staleKeyrings].filter(
    (k) => !usedKeyrings.has(k) && places.some((p) => k.startsWith(p)) && !k.includes(".."),
  );
  return plan;
}

/** A deb822 .sources file: its stale stanzas go; the file goes when no entry is left. */
function planDeb822File(file: SourceFile, ctx: FilePlanning): void {
  const entries = stanzas(file.text).map((b): Entry & { block: string } => {
    const uris = (deb822Field(b, "URIs") ?? "").split(/\s+/).filter(Boolean);
    const keyrings = (deb822Field(b, "Signed-By") ?? "").split(/\s+/).filter((v) => v.startsWith("/"));
    const stale = !ctx.kept && isEntryStanza(b) && uris.some((u) => ctx.wanted.has(normalizeUri(u)));
    return { block: b, keyrings, stale };
  });
  for (const e of entries) for (const k of e.keyrings) (e.stale ? ctx.staleKeyrings : ctx.usedKeyrings).add(k);
  if (!entries.some((e) => e.stale)) return;
  const rest = entries.filter((e) => !e.stale);
  if (!rest.some((e) => isEntryStanza(e.block))) ctx.plan.remove.push(file.path);
  else ctx.plan.rewrite.push({ path: file.path, text: `${rest.map((e) => e.block).join("\n\n")}\n` });
}

/** A one-line-style file: its stale lines are commented out; a .list file of only those goes. */
function planOneLineFile(file: SourceFile, ctx: FilePlanning): void {
  let stale = 0;
  let others = 0;
  const out = file.text.split("\n").map((line) => {
    const m = ONE_LINE.exec(line);
    if (!m) return line;
    const isStale = !ctx.kept && ctx.wanted.has(normalizeUri(m[3]));
    for (const k of signedByOf(m[2])) (isStale ? ctx.staleKeyrings : ctx.usedKeyrings).add(k);
    if (!isStale) {
      others++;
      return line;
    }
    stale++;
    return `# disabled by vm-install (superseded by ${ctx.keepSources.join(", ")}): ${line.trim()}`;
  });
  if (stale === 0) return;
  if (others === 0 && file.path.startsWith(`${SOURCES_DIR}/`)) ctx.plan.remove.push(file.path);
  else ctx.plan.rewrite.push({ path: file.path, text: out.join("\n").replace(/\n*$/, "\n") });
}

/**
 * Takes away what older set-ups of the same repository left: other source files for the same URIs
 * (docker-ce.list, a deb822 docker.sources, a line in /etc/apt/sources.list), the keyrings only they
 * used (e.g. /usr/share/keyrings/docker-archive-keyring.gpg; a keyring a dpkg package owns stays), and
 * the repository's key in apt-key's /etc/apt/trusted.gpg. One command to look, one to act when needed.
 */
export function removeStaleRepositories(
  remote: Remote,
  opts: StaleRepositoryOptions,
  progress?: Progress,
): Promise<StaleRepositoryOutcome> {
  return staleStep(remote, opts, progress, async ({ plan, removals }) => {
    if (removals.length === 0) return [];
    const removal = { sudo: true, label: "removing stale apt sources and keys", timeoutMs: 60_000, mutates: true };
    const stdin = plan.rewrite.map((r) => r.text).join("");
    const script = removals.map((r) => guarded(r, `${r.command} && ${said(r.line)}`));
    const result = await remote.run(["set -e", ...script].join("\n"), { ...removal, stdin });
    return changedLines(result.stdout);
  });
}

/**
 * A check's removeStaleRepositories: the same look and plan, on the sources as the run finds them after
 * ensureAptRepository (`written`: its source file as it writes it), and the removal's lines without its
 * actions. A keyring the look did not already answer for (one a stale entry names, outside the legacy ones) is
 * asked with the removal's own condition, in one read-only exec.
 */
export function foreseeStaleRepositories(
  remote: Remote,
  opts: StaleRepositoryOptions,
  written: SourceFile[],
  progress?: Progress,
): Promise<StaleRepositoryOutcome> {
  return staleStep(
    remote,
    opts,
    progress,
    async ({ removals, legacy, present }) => {
      const asked = removals.filter((r) => r.keyring !== undefined && !legacy.includes(r.keyring));
      const there = asked.length
        ? changedLines(
            (
              await remote.run(asked.map((r) => guarded(r, said(r.line))).join("\n"), {
                sudo: true,
                label: "looking at the keyrings stale entries name",
                timeoutMs: 60_000,
              })
            ).stdout,
          )
        : [];
      return removals
        .filter((r) =>
          r.keyring === undefined ? true : asked.includes(r) ? there.includes(r.line) : present.includes(r.keyring),
        )
        .map((r) => r.line);
    },
    written,
  );
}

/** The look and the plan, a run's and a check's alike; `act` turns the removals into the lines said. */
async function staleStep(
  remote: Remote,
  opts: StaleRepositoryOptions,
  progress: Progress | undefined,
  act: (found: { plan: StalePlan; removals: Removal[]; legacy: string[]; present: string[] }) => Promise<string[]>,
  written: SourceFile[] = [],
): Promise<StaleRepositoryOutcome> {
  for (const u of opts.uris)
    if (!REPO_URL.test(u))
      throw new Error(`stale repository check: ${JSON.stringify(u)} is not an http(s) URL without quotes or spaces`);
  for (const f of opts.trustedFingerprints ?? [])
    if (!/^[0-9A-F]{40}$/.test(f))
      throw new Error(`stale repository check: ${JSON.stringify(f)} is not a 40-digit key fingerprint`);
  const legacy = [...new Set([...(opts.keyrings ?? []), ...opts.keep.keyrings.flatMap(supersededKeyrings)])];
  return stepIf(
    progress,
    "looking for stale sources and keys of the same repository",
    async () => {
      const look = sourcesLook(legacy, (opts.trustedFingerprints ?? []).length > 0);
      const found = await remote.run(look.script, { sudo: true, label: "reading apt sources", timeoutMs: 60_000 });
      const facts = look.parse(found.stdout);
      const listing = sourcesListingFrom({
        sources: facts.get("apt.sources"),
        keyrings: facts.get("apt.keyrings"),
        trusted: facts.get("apt.trusted"),
      });
      // The sources as the run finds them: what ensureAptRepository wrote in place of what was there.
      const files = [
        ...listing.files.map((f) => written.find((w) => w.path === f.path) ?? f),
        ...written.filter((w) => !listing.files.some((f) => f.path === w.path)),
      ];
      const plan = planStaleRemoval(files, { ...opts, keyrings: listing.keyrings });
      const fingerprints = (opts.trustedFingerprints ?? []).filter((f) => listing.trusted.includes(f));
      const changes = await act({ plan, removals: removals(plan, fingerprints), legacy, present: listing.keyrings });
      for (const change of changes) progress?.info(change);
      return { changed: changes.length > 0, changes };
    },
    "apt_repository",
  );
}

function changedLines(stdout: string): string[] {
  return stdout
    .split("\n")
    .filter((l) => l.startsWith("changed:"))
    .map((l) => l.slice("changed:".length));
}

/** One removal: its command, the line it says, and for a keyring the file (removed only if removable). */
interface Removal {
  command: string;
  line: string;
  keyring?: string;
}

const said = (what: string) => `echo ${quote(`changed:${what}`)}`;
/** `then` under the removal's condition, for a keyring. */
const guarded = (r: Removal, then: string) => (r.keyring ? `if ${removable(r.keyring)}; then ${then}; fi` : then);

/** The removals, in the order the script makes them. */
function removals(plan: StalePlan, fingerprints: string[]): Removal[] {
  const out: Removal[] = plan.remove.map((path) => ({ command: `rm -f ${quote(path)}`, line: `removed ${path}` }));
  // Each rewritten file is the next part of stdin, in this order (removeStaleRepositories joins them).
  for (const { path, text } of plan.rewrite) {
    const f = { path, content: text, writer: "root", mode: "0644" } as const;
    out.push({ command: writeFragment(f), line: `removed this repository's entries from ${path}` });
  }
  for (const k of plan.keyrings) out.push({ command: `rm -f ${quote(k)}`, line: `removed ${k}`, keyring: k });
  if (fingerprints.length) {
    out.push({
      command:
        `h=$(mktemp -d) && gpg --homedir "$h" --batch --yes --no-default-keyring --keyring /etc/apt/trusted.gpg ` +
        `--delete-keys ${fingerprints.join(" ")} && rm -rf "$h"`,
      line: `removed key ${fingerprints.join(", ")} from /etc/apt/trusted.gpg (apt-key)`,
    });
  }
  return out;
}
