// What one apt-get install brought, written by its own dpkg runs inside apt's frontend lock (no other apt
// or dpkg runs until apt-get exits): the status logger lists every package they touched, the first
// pre-invoke hook what dpkg had before them, each post-invoke hook the groups and users after them. So a
// package root, unattended-upgrades or cloud-init installs at any moment of a job is never taken for ours.
// Root-only directory, reset when an install step starts (a rerun attaching to a running step reads it).

import { quote } from "../../lib/shared/shell-quote";
import { commandFailed, type Remote, type RunOptions, type RunResult, runLong } from "./exec";
import {
  defineLook,
  type Fact,
  type Facts,
  followedByLook,
  lookAtEnd,
  type Probe,
  type RootFact,
  rootFact,
} from "./vm-facts";

export const TRANSACTION_DIR = "/run/vm-install/apt-transaction";
const at = (file: string) => `${TRANSACTION_DIR}/${file}`;

/** Writes each file whole (tmp, then rename), so a hook cut short never leaves half a list. */
const saved = (pairs: [string, string][]) =>
  `${pairs.map(([cmd, file]) => `${cmd} > ${at(file)}.tmp`).join(" && ")} && ` +
  pairs.map(([, file]) => `mv ${at(file)}.tmp ${at(file)}`).join(" && ");

const PACKAGES = `dpkg-query -W -f='\${db:Status-Abbrev}\\t\${Package}\\n'`;
const DPKG_LOG = "/var/log/dpkg.log";
/** Only the first dpkg run of the transaction says what was there before it (and how long dpkg.log was). */
const PRE_INVOKE =
  `[ -e ${at("before.users")} ] || { ` +
  `${saved([
    ["date '+%F %T'", "before.time"],
    [`{ wc -c < ${DPKG_LOG} || echo 0; } 2>/dev/null`, "before.log_size"],
    [PACKAGES, "before.packages"],
    ["getent group", "before.groups"],
    ["getent passwd", "before.users"],
  ])}; }`;
/**
 * After the first dpkg run: the time of the first line it wrote to dpkg.log, which is when the transaction
 * began in dpkg's own words (the pre-invoke hook's clock can be a second or more before it, and on a VM
 * whose dpkg.log this transaction began, the log must not seem to begin after the install).
 */
const FIRST_LOGGED =
  `[ -e ${at("logged.first")} ] || { tail -c +$(($(cat ${at("before.log_size")} 2>/dev/null || echo 0) + 1)) ` +
  `${DPKG_LOG} 2>/dev/null | head -n 1 | cut -c 1-19 > ${at("logged.first")}.tmp && ` +
  `mv ${at("logged.first")}.tmp ${at("logged.first")}; }`;
/** Each dpkg run overwrites it: the last one's is the transaction's end (a killed dpkg leaves the one before). */
const POST_INVOKE = `${FIRST_LOGGED}; ${saved([
  ["getent group", "after.groups"],
  ["getent passwd", "after.users"],
])}`;

/** dpkg's own options that make its runs keep the record (dpkg runs each hook with sh -c, as root). */
export const TRANSACTION_DPKG_OPTIONS = [
  `--pre-invoke=${PRE_INVOKE}`,
  `--post-invoke=${POST_INVOKE}`,
  `--status-logger=cat >> ${at("status")}`,
];

/** The same, given to apt-get for the dpkg runs it makes. */
export const TRANSACTION_OPTIONS = TRANSACTION_DPKG_OPTIONS.flatMap((o) => ["-o", `Dpkg::Options::=${o}`]);

/** Before apt-get, in the same step: an empty record directory, root's alone (/run/vm-install is root's). */
const MAKE_DIR = `rm -rf ${TRANSACTION_DIR} && mkdir -m 700 ${TRANSACTION_DIR}`;
export const TRANSACTION_PROLOGUE = `mkdir -p /run/vm-install && ${MAKE_DIR}`;

/** `apt-get install ...` (with TRANSACTION_OPTIONS), or a script of such (in braces), as a step keeping a record. */
export function inTransaction(installCommand: string): string {
  return `${TRANSACTION_PROLOGUE} && ${installCommand.includes("\n") ? `{\n${installCommand}\n}` : installCommand}`;
}

/** Each file of the record, and what it tells (the docs' audit table): all of it root's, dpkg's hooks'. */
const USES = {
  "before.time":
    "the VM's clock as dpkg.log writes it, before this job's first dpkg run (when logged.first is not there)",
  "before.log_size": "dpkg.log's length before this job's first dpkg run (where its own lines begin)",
  "logged.first": "the time of the first line this job's dpkg runs wrote to dpkg.log: recorded with its packages",
  "before.packages": "packages there before this job's install (its first dpkg run's pre-invoke hook)",
  "before.groups": "groups there before this job's install",
  "before.users": "users there before this job's install",
  status: "every package this job's own dpkg runs touched (their status logger): recorded if new",
  "after.groups": "groups after this job's last dpkg run (its post-invoke hook): recorded if new",
  "after.users": "users after this job's last dpkg run: recorded if new",
} as const;
const FILES = Object.keys(USES) as (keyof typeof USES)[];
const probe = <N extends keyof typeof USES>(name: N) =>
  ({
    name: `apt_tx.${name}`,
    command: `if [ -e ${quote(at(name))} ]; then cat ${quote(at(name))}; else exit 3; fi`,
    writer: "root",
    use: USES[name],
  }) as const;

/** After each apt-get install, as root (the directory is 0700): the transaction's own record. */
export const TRANSACTION_LOOK = defineLook("the look at the apt transaction's record", FILES.map(probe));

export type TransactionFacts = Record<keyof typeof USES, RootFact>;

/** What the transaction brought (the inventory's lists). */
export interface TransactionRecord {
  packages: string[];
  groups: string[];
  users: string[];
  /** When its first dpkg run began, in dpkg.log's words ("2026-12-05 21:51:06"); none from an older hook. */
  at?: string;
}

/** A time as dpkg.log and `date '+%F %T'` write it: such strings sort as the times do. */
export const DPKG_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$/;

/** dpkg's states of a package that is not on the VM. */
const GONE_STATES = new Set(["not-installed", "config-files"]);
/** db:Status-Abbrev's second letter for those: n, c. */
const GONE_ABBREV = new Set(["n", "c"]);

const text = (fact: RootFact) => rootFact(fact, "the apt transaction's record").text;
const firstFields = (fact: RootFact) =>
  new Set(
    text(fact)
      .split("\n")
      .map((l) => l.split(":")[0].trim())
      .filter(Boolean),
  );

/**
 * Pure: the packages dpkg touched whose last state leaves them on the VM and that were not there before
 * the first dpkg run; the groups and users there after the last run and not before the first.
 */
export function transactionFrom(facts: TransactionFacts): TransactionRecord {
  for (const f of Object.values(facts)) {
    if (f.code !== 0 && f.code !== 3) throw new Error(`reading ${TRANSACTION_DIR} failed: ${f.name} exited ${f.code}`);
  }
  const last = new Map<string, string>();
  if (facts.status.code === 0) {
    for (const line of text(facts.status).split("\n")) {
      const m = /^status: ([^\s:]+)(?::[^\s:]+)?: (\S+)$/.exec(line.trim());
      if (m) last.set(m[1], m[2]);
    }
  }
  const none = { packages: [], groups: [], users: [] };
  if (last.size === 0) return none;
  if (facts["before.packages"].code !== 0)
    throw new Error(
      `dpkg changed packages in this job's apt-get install but ${at("before.packages")} is missing ` +
        "(its pre-invoke hook did not run): what it installed cannot be told from what was there",
    );
  const before = new Set<string>();
  for (const line of text(facts["before.packages"]).split("\n")) {
    const [abbrev = "", name] = line.split("\t");
    if (name && abbrev.length >= 2 && !GONE_ABBREV.has(abbrev[1])) before.add(name.trim());
  }
  const packages = [...last].filter(([n, state]) => !GONE_STATES.has(state) && !before.has(n)).map(([n]) => n);
  const appeared = (b: RootFact, a: RootFact) => {
    if (b.code !== 0 || a.code !== 0) return [];
    const was = firstFields(b);
    return [...firstFields(a)].filter((n) => !was.has(n)).sort();
  };
  const began = [facts["logged.first"], facts["before.time"]]
    .map((f) => (f?.code === 0 ? text(f).trim() : ""))
    .find((t) => DPKG_TIME.test(t));
  return {
    packages: packages.sort(),
    groups: appeared(facts["before.groups"], facts["after.groups"]),
    users: appeared(facts["before.users"], facts["after.users"]),
    ...(began ? { at: began } : {}),
  };
}

/** A look's answers by probe name, for probes declared at run time (undefined: not read). */
export type SeenFacts = (name: string) => Fact | undefined;

/**
 * Where a transaction's record goes (package-inventory.ts recordInstalls), and what it reads to add it there
 * (the inventory file): read in the same exec as the record.
 */
export interface TransactionRecorder {
  readonly probes: readonly Probe[];
  record(added: TransactionRecord, seen: SeenFacts): Promise<void>;
}

/**
 * The look after an install step, as root (the directory is 0700): the transaction's own record and `more`
 * (what the recorder reads to keep it; what the caller reads right after the step: the packages it asked
 * for, an installer's own look), one exec where it was three and more (issue 30).
 */
export function afterTransactionLook(more: readonly Probe[] = []) {
  return defineLook(TRANSACTION_LOOK.what, [...TRANSACTION_LOOK.probes, ...more]);
}

/**
 * Reads the transaction's record with the recorder's and the caller's probes; the record, and every answer.
 * `answered`: that look's answers where they came back with the step's own exec (followedStep).
 */
async function readTransaction(
  remote: Remote,
  more: readonly Probe[] = [],
  answered?: Facts<readonly Probe[]>,
): Promise<{ record: TransactionRecord; seen: SeenFacts }> {
  const look = afterTransactionLook(more);
  const read = async () =>
    look.parse(
      (await remote.run(look.script, { sudo: true, label: `reading ${TRANSACTION_DIR}`, timeoutMs: 30_000 })).stdout,
    );
  const facts = answered ?? (await read());
  const names = new Set(look.probes.map((p) => p.name));
  const seen: SeenFacts = (name) => (names.has(name) ? facts.get(name) : undefined);
  const record = transactionFrom(
    Object.fromEntries(FILES.map((f) => [f, facts.get(`apt_tx.${f}`)])) as TransactionFacts,
  );
  return { record, seen };
}

/**
 * Runs `step` (one apt-get install with TRANSACTION_OPTIONS, or the dpkg repair with its hooks, inTransaction)
 * and hands its record to `recorder`, whatever the step's outcome; a recorder that fails fails the step only
 * when the step succeeded. `what`: the step, in the error's words. `also`: probes read in the same look after
 * the step, their answers in `seen` (undefined when the look could not be read).
 */
export async function recordedStep<T>(
  remote: Remote,
  step: () => Promise<T>,
  recorder: TransactionRecorder,
  what = "apt-get install",
  also: readonly Probe[] = [],
  answered: () => Facts<readonly Probe[]> | undefined = () => undefined,
): Promise<{ result: T; seen?: SeenFacts }> {
  const outcome = await step().then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  let seen: SeenFacts | undefined;
  const recorded = readTransaction(remote, [...recorder.probes, ...also], answered()).then((read) => {
    seen = read.seen;
    return recorder.record(read.record, read.seen);
  });
  if ("error" in outcome) {
    await recorded.catch(() => undefined);
    throw outcome.error;
  }
  // A plain Error: a CommandError would read as apt's own failure, and be retried package by package.
  await recorded.catch((err: Error) => {
    throw new Error(`${what} succeeded, but recording what it brought failed: ${err.message}`);
  });
  return { result: outcome.result, seen };
}

/**
 * `command` (apt-get install with TRANSACTION_OPTIONS) as an install step followed, in the same exec, by the
 * look recordedStep reads after it (issue 30: one round trip less per install). `run` gives the step's result
 * without the look's frames and throws what run() would for it; `answered` hands recordedStep the look's
 * answers, undefined when they did not come back whole (recordedStep then reads them on its own).
 */
export function followedStep(
  remote: Remote,
  command: string,
  opts: RunOptions & { label: string },
  more: readonly Probe[],
): { run: () => Promise<RunResult>; answered: () => Facts<readonly Probe[]> | undefined } {
  const look = afterTransactionLook(more);
  let answers: Facts<readonly Probe[]> | undefined;
  const run = async () => {
    const r = await runLong(remote, followedByLook(inTransaction(command), look), { ...opts, check: false });
    const { before, facts } = lookAtEnd(look, r.stdout);
    answers = facts;
    const result = { ...r, stdout: before };
    if (r.code !== 0) throw commandFailed(opts.label, command, result);
    return result;
  };
  return { run, answered: () => answers };
}
