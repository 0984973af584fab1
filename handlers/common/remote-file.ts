// The one way a file is written on the VM: a temporary file beside it, filled from stdin and size-checked,
// given its mode (and owner) and renamed over the path with `mv -fT`, which replaces a link there instead of
// writing through it. Root writes only into directories root alone can change; a system user writes only
// where it may write anyway, so a link it finds there leads nowhere it could not go itself.

import { UNIX_USER } from "../../lib/shared/names";
import { quote } from "../../lib/shared/shell-quote";
import type { Remote, RunOptions, RunResult } from "./exec";

/** Who writes (and so owns) the file: root through sudo, or a named system user ("postgres") through sudo -u. */
export type Writer = "root" | { user: string };

/** One file to write on the VM. */
export interface RemoteFile {
  /** Absolute, without `.`, `..` or empty parts: the directory checked is the one the path names. */
  path: string;
  /** The bytes, sent on stdin (never on a command line, where `ps` shows it). */
  content: string | Buffer;
  writer: Writer;
  /**
   * The mode, octal ("0600"), or `{ keep: "0644" }`: the mode of the regular file the writer itself owns at
   * `path` (a link, another owner's file or one with setuid, setgid or sticky bits is not kept), else 0644.
   * Root's own mode is a root fact; another owner's is not, so it decides nothing.
   * Every mode given has u+rw: the temporary file is 0600 (mktemp) until it is full, never wider than it.
   */
  mode: string | { keep: string };
  /** `user:group` given to the file before the rename; root's writes only. */
  owner?: string;
  /** Root's writes only: the directory is created with this mode when missing (its parent must exist);
   * `exact` sets that mode every time. */
  dir?: { mode: string; exact?: boolean };
  /**
   * Leave a regular file that already has these bytes, this mode and the writer as owner alone. The fragment
   * sets `$w`: "new" (there was no file), "content" (other bytes), "mode" (same bytes, other mode or owner),
   * or "" (left alone). Not with `owner`.
   */
  unlessSame?: boolean;
}

const MODE = /^0?[0-7]{3}$/;
const OWNER = /^[a-z_][a-z0-9_-]{0,31}:[a-z_][a-z0-9_-]{0,31}$/;

/** The spec's mistakes, found before anything is sent; the caller's code is at fault, so the message says so. */
function checkSpec(spec: RemoteFile): void {
  const fail = (why: string) => {
    throw new Error(`remote file ${JSON.stringify(spec.path)}: ${why} (a bug in the caller)`);
  };
  const parts = spec.path.split("/");
  if (parts[0] !== "" || parts.length < 3 || parts.slice(1).some((p) => p === "" || p === "." || p === ".."))
    fail("not an absolute path below / without empty, . or .. parts");
  if (!/^[ -~]+$/.test(spec.path)) fail("not printable ASCII");
  const root = spec.writer === "root";
  if (spec.writer !== "root" && !UNIX_USER.test(spec.writer.user))
    fail(`writer ${JSON.stringify(spec.writer.user)} is not a user name`);
  for (const m of [typeof spec.mode === "string" ? spec.mode : spec.mode.keep, spec.dir?.mode ?? "0700"])
    if (!MODE.test(m) || (Number.parseInt(m, 8) & 0o600) !== 0o600) fail(`mode ${m} is not octal with u+rw`);
  if (spec.owner !== undefined && (!root || !OWNER.test(spec.owner))) fail("owner is root's, as user:group");
  if (spec.dir && !root) fail("only root creates the directory");
  if (spec.unlessSame && spec.owner !== undefined) fail("unlessSame compares with the writer as owner, not owner");
}

/** The RunOptions that make a command run as the spec's writer. */
function asWriter(writer: Writer): Pick<RunOptions, "sudo" | "user"> {
  return writer === "root" ? { sudo: true } : { user: writer.user };
}

/** Every directory from / down to `dir`, each a word for the shell. */
function ancestry(dir: string): string[] {
  const parts = dir.split("/").slice(1);
  return ["/", ...parts.map((_, i) => `/${parts.slice(0, i + 1).join("/")}`)].map(quote);
}

/**
 * Root's guard, a shell function: each directory it is given is a real directory (not a link), root's, that
 * neither group nor others may write; anything else is named on stderr and the write refused (exit 1).
 */
function rootOnlyGuard(path: string): string {
  const why = `vm-install: refusing to write ${path} as root: not a directory only root can change: `;
  const todo = "(a link, another owner's, or group/other-writable): make it a directory of root's, 0755, and run again";
  return (
    `g() { b=$(find "$@" -maxdepth 0 \\( -not -type d -o -not -user 0 -o -perm /022 \\) -printf '%p (%M %u) ' 2>&1) ` +
    `&& [ -z "$b" ] || { echo ${quote(why)}"$b"${quote(todo)} >&2; exit 1; }; }`
  );
}

/**
 * The shell fragment that writes `spec` from the next byteLength(content) bytes of stdin, for a script run as
 * the spec's writer (asWriter), alone or joined with `&&` to others that share stdin in order (several files
 * in one exec). `head -c` reads no more than its own bytes and the size is checked, so a short stdin (a lost
 * link) fails instead of installing a cut file. On any failure the temporary file is removed and the
 * fragment exits 1, naming the path on stderr.
 */
export function writeFragment(spec: RemoteFile): string {
  checkSpec(spec);
  const p = quote(spec.path);
  const cut = spec.path.lastIndexOf("/");
  const dir = spec.path.slice(0, cut) || "/";
  const name = spec.path.slice(cut + 1);
  const n = Buffer.byteLength(spec.content);
  const steps = [...guardSteps(spec, dir, true), modeStep(spec)];
  const fill = [
    `head -c ${n} > "$t"`,
    `[ "$(wc -c < "$t")" -eq ${n} ]`,
    `chmod "$m" "$t"`,
    ...(spec.owner ? [`chown ${spec.owner} "$t"`] : []),
  ];
  const rename = spec.unlessSame ? sameOrRename(p) : `mv -fT "$t" ${p}`;
  const failed = quote(`vm-install: could not write ${spec.path} (the temporary file was removed)`);
  steps.push(
    // A signal (the session ending) removes the temporary file too; the trap is undone once it is renamed.
    `t=; trap 'rm -f "$t"; exit 1' HUP INT TERM`,
    `t=$(mktemp ${quote(`${dir === "/" ? "" : dir}/.${name}.XXXXXX`)}) || exit 1`,
    `{ ${fill.join(" && ")} && ${rename}; } || { rm -f "$t"; echo ${failed} >&2; exit 1; }`,
    "trap - HUP INT TERM",
  );
  return `{ ${steps.join("; ")}; }`;
}

/**
 * Root's directory checks (and the directory created when `create`), as shell steps: every directory from / down
 * is root's alone. Without `create` a missing directory is left for the write to make and not checked.
 */
function guardSteps(spec: RemoteFile, dir: string, create: boolean): string[] {
  if (spec.writer !== "root") return [];
  // Who owns each directory written into: root (grants, daemon.json, apt's files); postgres' cluster
  // directories are written by postgres itself, never by root.
  const line = ancestry(dir);
  const d = quote(dir);
  const steps = [rootOnlyGuard(spec.path)];
  if (spec.dir) {
    steps.push(`g ${line.slice(0, -1).join(" ")}`);
    if (!create) return [...steps, `if [ -d ${d} ]; then g ${d}; fi`];
    steps.push(`{ [ -d ${d} ] || mkdir -m ${spec.dir.mode} ${d} || exit 1; }`);
  }
  steps.push(`g ${(spec.dir ? line.slice(-1) : line).join(" ")}`);
  if (create && spec.dir?.exact) steps.push(`{ chmod ${spec.dir.mode} ${d} || exit 1; }`);
  return steps;
}

/** `$m`, the mode the file is to have. */
function modeStep(spec: RemoteFile): string {
  if (typeof spec.mode === "string") return `m=${spec.mode}`;
  // stat, not chmod --reference, which follows a link; only the writer's own plain file says what to keep.
  return (
    `m=${spec.mode.keep}; s=$(stat -c %F.%u.%a ${quote(spec.path)} 2>/dev/null) || s=; case $s in ` +
    `"regular file.$(id -u)".[0-7][0-7][0-7] | "regular empty file.$(id -u)".[0-7][0-7][0-7]) m=\${s##*.};; esac`
  );
}

/**
 * unlessSame's decision, `$w`: what differs between the wanted bytes (`wanted`, a cmp operand) and the file
 * at `p`, by its type, bytes, owner and mode (`$m`). A link or anything but a regular file is "content".
 */
function sameAs(p: string, wanted: string): string {
  return (
    `case "$(stat -c %F.%u.%a ${p} 2>/dev/null)" in "") w=new;; ` +
    `"regular file."* | "regular empty file."*) if cmp -s ${wanted} ${p}; then ` +
    `case "$(stat -c %u.%a ${p})" in "$(id -u).\${m#0}") w=;; *) w=mode;; esac; else w=content; fi;; ` +
    `*) w=content;; esac`
  );
}

/** unlessSame's rename: `$w` says what differed; a file that already is the wanted one stays untouched. */
function sameOrRename(p: string): string {
  return `${sameAs(p, '"$t"')} && if [ -n "$w" ]; then mv -fT "$t" ${p}; else rm -f "$t"; fi`;
}

/**
 * writeFragment's decision alone, for a check: `$w` as an unlessSame write would set it, the same directory
 * checks (refused alike), the spec's bytes read from stdin (all of them, so fragments share stdin in order)
 * and compared, nothing written. Without content (not known yet): "new" where there is no file, else "unknown".
 */
export function compareFragment(spec: Omit<RemoteFile, "content"> & { content?: RemoteFile["content"] }): string {
  const { content } = spec;
  const p = quote(spec.path);
  const dir = spec.path.slice(0, spec.path.lastIndexOf("/")) || "/";
  checkSpec({ ...spec, content: content ?? "" });
  if (!spec.unlessSame) throw new Error(`remote file ${JSON.stringify(spec.path)}: compared only unlessSame`);
  const guards = guardSteps({ ...spec, content: "" }, dir, false);
  if (content === undefined)
    return `{ ${[...guards, `if [ -e ${p} ] || [ -L ${p} ]; then w=unknown; else w=new; fi`].join("; ")}; }`;
  const n = Buffer.byteLength(content);
  // cmp stops at the first difference: cat takes the rest of the file's bytes off stdin.
  const compare = `w=$(head -c ${n} | { ${sameAs(p, "-")}; cat > /dev/null; printf %s "$w"; })`;
  return `{ ${[...guards, modeStep({ ...spec, content }), compare].join("; ")}; }`;
}

/** Writes `spec` on the VM in one exec of its own (a change: check mode refuses it). */
export function writeRemoteFile(
  remote: Remote,
  spec: RemoteFile,
  opts: { label?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return remote.run(writeFragment(spec), {
    ...asWriter(spec.writer),
    stdin: spec.content,
    label: opts.label ?? `writing ${spec.path}`,
    timeoutMs: opts.timeoutMs ?? 30_000,
    mutates: true,
  });
}
