// A scripted double of the VM for handler tests: an ordered list of expected commands, each with the
// output it gets. A command that is not the next expected one fails the test (and the handler), so a
// test also proves nothing else ran. Results go through the real ExecRemote, so exit checks,
// CommandError wording and scrubbing are the production ones.

import type { Duplex } from "node:stream";
import { TRANSACTION_LOOK, TRANSACTION_PROLOGUE } from "../../../handlers/common/apt-transaction";
import { CLOUD_INIT_LOOK } from "../../../handlers/common/cloud-init";
import { DPKG_HEALTH_LOOK } from "../../../handlers/common/dpkg-health";
import type { Connection } from "../../../handlers/common/exec";
import { ExecRemote, type RunOptions, type RunResult, TunnelRefused } from "../../../handlers/common/exec";
import { GRANTS_LOOK } from "../../../handlers/common/grants";
import { LOCK_TABLE_LOOK } from "../../../handlers/common/lock-holders";
import { INVENTORY_LOOK, PACKAGES_FILE } from "../../../handlers/common/package-inventory";
import { SecretScrubber } from "../../../lib/shared/secrets";
import { type FakeMode, type FakePostgres, fakePostgres } from "./fake-postgres";
import { type Answer, answerLook, followedParts, probesOf, sqlFirstParts } from "./look-answers";
import { renameOf } from "./remote-writes";

/** What a TCP channel opened after a step reaches: a fake PostgreSQL server, or sshd's refusal. */
export type TunnelAnswer = { password: string; mode?: FakeMode; who?: string } | { refused: "forwarding" | "connect" };

export interface Step {
  /** The command as given to run() (before sudo wrapping): a substring or a pattern. */
  match: string | RegExp;
  /** When set, the call's sudo flag must be exactly this. */
  sudo?: boolean;
  code?: number | null;
  stdout?: string;
  /** For a look's script (vm-facts.ts): its probes' answers, framed; a probe not named answers look-answers' QUIET. */
  facts?: Record<string, Answer>;
  stderr?: string;
  /** Extra assertions on the call. */
  check?: (command: string, opts: RunOptions) => void;
  /** What the TCP channels opened after this step reach (tunnel()); none: opening one fails the test. */
  tunnel?: TunnelAnswer;
}

export interface Call {
  command: string;
  opts: RunOptions;
}

export class ScriptedRemote implements Connection {
  readonly calls: Call[] = [];
  /** Every command run, the ones answered without a step too: the job's SSH execs, in order. */
  readonly sent: string[] = [];
  /** Commands answered without a step: the dpkg health look before apt work, on a healthy dpkg. */
  readonly implicit: string[] = [];
  /** How many times the look at an install's transaction record was answered without a step (nothing new). */
  transactionLooks = 0;
  /** The package inventory as written when no step scripted it (reads of it answer this; undefined: no file). */
  packageInventory?: string;
  /** How many times the look for systemd was answered without a step (the VM runs systemd). */
  /** How many times the look for cloud-init was answered without a step (the VM has none). */
  cloudInitLooks = 0;
  /** How many times the look at apt's locks was answered without a step (nobody holds them). */
  lockLooks = 0;
  /** How many times the grants inventory was read without a step (the VM has none). */
  grantsLooks = 0;
  closed = false;
  /** Every TCP channel opened, with the fake server at its end. */
  readonly tunnels: { host: string; port: number; server?: FakePostgres }[] = [];
  private next = 0;

  constructor(
    private readonly script: Step[],
    readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`,
    readonly target = "ubuntu@192.0.2.10:22",
    private readonly secrets = new SecretScrubber(),
  ) {}

  async run(sent: string, opts: RunOptions = {}): Promise<RunResult> {
    this.sent.push(sent);
    // The role and database's SQL run first in the configuration's exec (sql-first.ts): the steps scripted for
    // the two execs it was answer its two parts; the exec's status is 100 + psql's when the SQL fails.
    const first = sqlFirstParts(sent, String(opts.stdin ?? ""));
    if (first) {
      const sql = await this.answer(first.psql, { ...opts, stdin: first.sql, check: false });
      if (sql.code === 0) return this.answer(first.rest, { ...opts, stdin: first.restStdin });
      const failed = new ExecRemote(
        async () => ({ code: 100 + sql.code, stdout: Buffer.from(""), stderr: Buffer.from(sql.stderr) }),
        { target: this.target, user: "ubuntu", secrets: this.secrets },
      );
      return failed.run(sent, opts);
    }
    const followed = followedParts(sent);
    if (!followed) return this.answer(sent, opts);
    // A command and the look after it in one exec (vm-facts.ts followedByLook): the command as scripted (a
    // failure throws as it would), then the look, its probes answered by the steps scripted next where they
    // match (a transcript of the reads one by one has them after the command), the others QUIET.
    // An install's transaction look rides in its exec (apt-transaction.ts followedStep): answered as the look
    // on its own was, by its scripted step or the record of no hook run. The look runs whatever the outcome.
    const r = await this.answer(followed.command, { ...opts, check: false });
    const look = followed.look.startsWith(TRANSACTION_LOOK.script)
      ? (await this.answer(followed.look, { ...opts, sudo: true })).stdout
      : answerLook(followed.look, this.foldedInto(followed.look, {}));
    const whole = { ...r, stdout: `${r.stdout}\n${look}` };
    if (r.code === 0 || opts.check === false) return whole;
    return new ExecRemote(
      async () => ({ code: r.code, stdout: Buffer.from(whole.stdout), stderr: Buffer.from(r.stderr) }),
      { target: this.target, user: "ubuntu", secrets: this.secrets },
    ).run(sent, opts);
  }

  private async answer(sent: string, opts: RunOptions): Promise<RunResult> {
    // An install step's record directory made empty first (apt-transaction.ts): steps match the apt-get line,
    // or the script (the dpkg repair's) inTransaction put in braces.
    const inTx = sent.startsWith(`${TRANSACTION_PROLOGUE} && `) ? sent.slice(TRANSACTION_PROLOGUE.length + 4) : sent;
    const command = inTx !== sent && inTx.startsWith("{\n") && inTx.endsWith("\n}") ? inTx.slice(2, -2) : inTx;
    const step = this.script[this.next];
    const matches = step && (typeof step.match === "string" ? command.includes(step.match) : step.match.test(command));
    const quiet = (stdout: string): RunResult => ({ code: 0, stdout, stderr: "", durationMs: 0 });
    // dpkg's health is looked at before any apt work; unless a test scripts it, dpkg is clean.
    if (command === DPKG_HEALTH_LOOK.script && !matches) {
      this.implicit.push(command);
      return quiet(answerLook(command));
    }
    // Each install's own record is read after it (apt-transaction.ts), with the package inventory and what
    // the caller reads then (the packages' verify, an installer's look: answered by the steps scripted next
    // when they match); unless a test scripts it, dpkg ran no hook (a double runs no dpkg): nothing recorded.
    if (command.startsWith(TRANSACTION_LOOK.script) && !matches) {
      this.transactionLooks++;
      const kept = this.inventoryAnswer(command);
      return quiet(answerLook(command, { ...kept, ...this.foldedInto(command, kept) }));
    }
    // The package inventory's file, read and written when no step scripts it: kept here.
    if (!matches && opts.sudo && command === INVENTORY_LOOK.script) {
      const file = this.packageInventory;
      return quiet(answerLook(command, { "inventory.packages": file ? file : { code: 3 } }));
    }
    if (!matches && opts.sudo && command.includes(renameOf(PACKAGES_FILE))) {
      this.packageInventory = String(opts.stdin);
      return quiet("");
    }
    // install-docker reads the grants inventory on every run that finds Docker, to re-check its records;
    // unless a test scripts it, vm-install granted nothing on the VM yet.
    if (!matches && opts.sudo && command === GRANTS_LOOK.script) {
      this.grantsLooks++;
      return quiet(answerLook(command, { grants: { code: 3 } }));
    }
    // While the first boot goes on cloud-init is looked at again, and Apt at the lock before its first
    // apt step; unless a test scripts them, the VM has no cloud-init and nobody holds a lock.
    if (command === CLOUD_INIT_LOOK.script && !matches) {
      this.cloudInitLooks++;
      return quiet(answerLook(command));
    }
    if (command === LOCK_TABLE_LOOK.script && !matches) {
      this.lockLooks++;
      return quiet(answerLook(command));
    }
    this.calls.push({ command, opts });
    if (!step || !matches || (step.sudo !== undefined && step.sudo !== !!opts.sudo)) {
      const expected = step
        ? `${String(step.match)}${step.sudo !== undefined ? ` (sudo ${step.sudo})` : ""}`
        : "no more commands";
      throw new Error(
        `ScriptedRemote: unexpected command #${this.next + 1} ${JSON.stringify(command)} (sudo ${!!opts.sudo}); ` +
          `expected ${expected}`,
      );
    }
    this.next++;
    step.check?.(command, opts);
    const facts = step.facts && {
      ...this.inventoryAnswer(command),
      ...this.foldedInto(command, step.facts),
      ...step.facts,
    };
    const exec = new ExecRemote(
      async () => ({
        code: step.code === undefined ? 0 : step.code,
        stdout: Buffer.from(facts ? answerLook(command, facts) : (step.stdout ?? "")),
        stderr: Buffer.from(step.stderr ?? ""),
      }),
      { target: this.target, user: "ubuntu", secrets: this.secrets },
    );
    return exec.run(command, opts);
  }

  /** The package inventory's probe answered from the file as kept here, when `script` is a look reading it. */
  private inventoryAnswer(script: string): Record<string, Answer> {
    if (!probesOf(script).some((p) => p.name === "inventory.packages")) return {};
    return { "inventory.packages": this.packageInventory ? this.packageInventory : { code: 3 } };
  }

  /**
   * A look's probes its step does not answer, answered by the steps scripted next when they match the probe's
   * command (the kit reads an installer's first probes in its boot look: a transcript of the reads one by one
   * still answers them, in order), those steps used up.
   */
  private foldedInto(script: string, answered: Record<string, Answer>): Record<string, Answer> {
    const out: Record<string, Answer> = {};
    const probes = probesOf(script);
    for (const probe of probes) {
      if (probe.name in answered || probe.name in out) continue;
      // A probe carrying looks of its own (server-look.ts serverLooksProbe) holds every command of them: it
      // is answered only by a step naming it, and a transcript of those looks one by one stays theirs.
      if (probe.command.includes("| base64 -w0; echo")) continue;
      const next = this.script[this.next];
      // A step answering a look by its facts answers it where it is folded in too (the look after a restart).
      const named = next?.facts !== undefined && probe.name in next.facts;
      const hit =
        next &&
        (named ||
          (typeof next.match === "string"
            ? probe.command.includes(next.match) || probesOf(next.match).some((p) => p.name === probe.name)
            : next.match.test(probe.command)));
      if (!hit) continue;
      // A step that answers a whole look (its framed output, or its facts) answers every probe of it folded here.
      const whole = next.facts ?? framesOf(next.stdout ?? "");
      if (whole && Object.keys(whole).every((name) => probes.some((p) => p.name === name))) {
        this.next++;
        Object.assign(out, whole);
        continue;
      }
      if (next.facts) continue;
      this.next++;
      out[probe.name] = { text: next.stdout ?? "", code: next.code ?? 0 };
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /**
   * A channel to the fake server the last matched step naming one names (its `tunnel`): the look that proved
   * the listener may come a write or two before the login (install-postgres' records).
   */
  async tunnel(host: string, port: number): Promise<Duplex> {
    const answer = this.script
      .slice(0, this.next)
      .reverse()
      .find((s) => s.tunnel)?.tunnel;
    if (!answer) throw new Error(`ScriptedRemote: a TCP channel to ${host}:${port} no step expects`);
    if ("refused" in answer) {
      this.tunnels.push({ host, port });
      throw answer.refused === "forwarding"
        ? new TunnelRefused("the VM's sshd refused a TCP channel (administratively prohibited)", true)
        : new TunnelRefused(`${this.target} could not connect to ${host}:${port}: Connection refused`, false);
    }
    const server = fakePostgres(answer);
    this.tunnels.push({ host, port, server });
    return server.client;
  }

  /** Every scripted step was used. */
  get done(): boolean {
    return this.next === this.script.length;
  }

  /** What is left, for a failing assertion's message. */
  get remaining(): string[] {
    return this.script.slice(this.next).map((s) => String(s.match));
  }
}

/** A look's framed output as answers by probe name; undefined when `stdout` is not frames only. */
function framesOf(stdout: string): Record<string, Answer> | undefined {
  const lines = stdout.split("\n").filter((l) => l !== "");
  if (!lines.length) return undefined;
  const out: Record<string, Answer> = {};
  for (const line of lines) {
    const m = /^([a-z0-9_:.-]+) ([A-Za-z0-9+/]*={0,2})$/.exec(line);
    if (!m) return undefined;
    const decoded = Buffer.from(m[2], "base64").toString("utf8");
    const cut = decoded.lastIndexOf("\n");
    if (cut < 0) return undefined;
    out[m[1]] = { text: decoded.slice(0, cut), code: Number(decoded.slice(cut + 1)) };
  }
  return out;
}
