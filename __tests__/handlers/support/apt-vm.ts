// A stateful double of a Debian 12 VM's apt and dpkg, for tests that run install-packages more than once
// against the same machine: packages installed (at a version), what the VM's package lists offer and what
// apt-get update would fetch, the lists' age, the package inventory and each install's transaction record.
// It answers whatever the handler asks from that state; a command it does not know fails the test, naming it.
import { TRANSACTION_LOOK, TRANSACTION_PROLOGUE } from "../../../handlers/common/apt-transaction";
import { LISTS_AGE_SCRIPT } from "../../../handlers/common/apt-update";
import { BOOT_LOOK } from "../../../handlers/common/boot-look";
import { DPKG_HEALTH_LOOK } from "../../../handlers/common/dpkg-health";
import { type Connection, ExecRemote, type RunOptions, type RunResult } from "../../../handlers/common/exec";
import { LOCK_TABLE_LOOK } from "../../../handlers/common/lock-holders";
import { INVENTORY_LOOK, PACKAGES_FILE } from "../../../handlers/common/package-inventory";
import { DEBIAN_12, dpkgLine, policyBlock } from "./fixtures";
import { answerFollowed, answerLook, answerLookWith, answerWithTransaction, type Reply } from "./look-answers";
import { renameOf, writtenFiles } from "./remote-writes";

export interface AptVmState {
  /** dpkg's installed packages: name -> version. */
  installed: Record<string, string>;
  /** What the VM's package lists offer: name -> versions, the candidate first; undefined: no lists at all. */
  lists?: Record<string, string[]>;
  /** What apt-get update fetches (the lists then). */
  mirror: Record<string, string[]>;
  /** Seconds since the lists were fetched. */
  listsAgeSec: number;
  /** /var/lib/vm-install/packages.json; undefined: no file. */
  inventory?: string;
  /** Packages an interrupted dpkg left configuring: name -> status (unpacked, half-configured) and version. */
  unsettled?: Record<string, { status: string; version: string }>;
}

const NOW = 1_800_000_000;
/** The commands of dpkg's health look's probes. */
const HEALTH = new Set<string>(DPKG_HEALTH_LOOK.probes.map((p) => p.command));

export class AptVm implements Connection {
  readonly target = "admin@192.0.2.10:22";
  readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`;
  /** Every command marked as a change that reached the VM. */
  readonly mutating: string[] = [];
  /** The last install's record as its dpkg hooks wrote it (apt-transaction.ts), by probe name. */
  private transaction: Record<string, string> = {};

  constructor(public state: AptVmState) {}

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    if (opts.mutates) this.mutating.push(opts.label ?? command);
    const a = this.answer(command, !!opts.sudo, String(opts.stdin ?? ""));
    const exec = new ExecRemote(
      async () => ({ code: a.code ?? 0, stdout: Buffer.from(a.stdout ?? ""), stderr: Buffer.from(a.stderr ?? "") }),
      { target: this.target, user: "admin" },
    );
    return exec.run(command, opts);
  }

  async close(): Promise<void> {}

  protected answer(cmd: string, sudo: boolean, stdin: string): Reply {
    // An install and the look at its transaction (one exec); apt-get update and the look after it.
    const followed =
      answerWithTransaction(cmd, (part) => this.answer(part, sudo, "")) ??
      answerFollowed(cmd, (c) =>
        /^apt-(cache|get update) /.test(c) || HEALTH.has(c) ? this.answer(c, sudo, "") : undefined,
      );
    if (followed) return followed;
    if (cmd.startsWith(BOOT_LOOK.script)) {
      const own = cmd.slice(BOOT_LOOK.script.length + 1);
      const boot = answerLook(BOOT_LOOK.script, { os_release: DEBIAN_12 });
      return { stdout: boot + (own ? answerLookWith(own, (c) => this.probe(c)) : "") };
    }
    if (cmd === LOCK_TABLE_LOOK.script) return { stdout: answerLook(cmd) };
    if (cmd === DPKG_HEALTH_LOOK.script) return { stdout: answerLookWith(cmd, (c) => this.probe(c)) };
    if (sudo && cmd.startsWith(`${TRANSACTION_PROLOGUE} && {\n`) && cmd.includes(" --configure -a\n"))
      return this.repair();
    if (sudo && cmd.startsWith(TRANSACTION_LOOK.script)) return { stdout: answerLookWith(cmd, (c) => this.probe(c)) };
    if (sudo && cmd === INVENTORY_LOOK.script) return { stdout: answerLookWith(cmd, (c) => this.probe(c)) };
    if (sudo && cmd.includes(renameOf(PACKAGES_FILE))) {
      this.state.inventory = writtenFiles(cmd, stdin).find((f) => f.path === PACKAGES_FILE)?.content;
      return {};
    }
    if (sudo && /^apt-get update -q && mkdir -p \/var\/lib\/apt\/periodic && touch /.test(cmd)) {
      this.state.lists = structuredClone(this.state.mirror);
      this.state.listsAgeSec = 0;
      return { stdout: "Hit:1 http://deb.debian.org/debian bookworm InRelease\nReading package lists...\n" };
    }
    if (sudo && cmd.startsWith(`${TRANSACTION_PROLOGUE} && apt-get install -y -q `)) return this.install(cmd);
    const probed = this.probe(cmd);
    return { stdout: probed.stdout, code: probed.code };
  }

  /** A read-only command, alone or as a look's probe. */
  protected probe(cmd: string): { stdout: string; code: number } {
    const s = this.state;
    if (HEALTH.has(cmd)) return this.health(cmd);
    const query = /^dpkg-query -W -f='[^']*' (.*)$/.exec(cmd);
    if (query) {
      const names = query[1].trim().split(/\s+/);
      const left = (n: string) => s.unsettled?.[n];
      const line = (n: string) =>
        left(n) ? dpkgLine(n, left(n)?.version, `install ok ${left(n)?.status}`) : dpkgLine(n, s.installed[n]);
      const lines = names.map((n) => (n in s.installed || left(n) ? line(n) : "")).join("");
      return { stdout: lines, code: names.every((n) => n in s.installed) ? 0 : 1 };
    }
    const policy = /^apt-cache policy (.*)$/.exec(cmd);
    if (policy) {
      const offered = policy[1].split(/\s+/).filter((n) => s.lists?.[n]);
      const blocks = offered.map((n) => {
        const versions = s.lists?.[n] ?? [];
        const all = s.installed[n] && !versions.includes(s.installed[n]) ? [...versions, s.installed[n]] : versions;
        return policyBlock(n, versions[0], all, s.installed[n]);
      });
      return { stdout: blocks.join(""), code: 0 };
    }
    if (cmd === LISTS_AGE_SCRIPT)
      return { stdout: s.lists ? `${NOW} ${NOW - s.listsAgeSec}\n` : `${NOW} none\n`, code: 0 };
    if (cmd === INVENTORY_LOOK.probes[0].command)
      return s.inventory === undefined ? { stdout: "", code: 3 } : { stdout: s.inventory, code: 0 };
    const record = /^if \[ -e '?\/run\/vm-install\/apt-transaction\/([a-z_.]+)'? \]; then cat /.exec(cmd)?.[1];
    if (record) {
      const text = this.transaction[record];
      return text === undefined ? { stdout: "", code: 3 } : { stdout: text, code: 0 };
    }
    throw new Error(`AptVm: a command this double does not know: ${cmd}`);
  }

  /** dpkg's health look's probes: what an interrupted dpkg left, as the status file's awk prints it. */
  private health(cmd: string): { stdout: string; code: number } {
    if (cmd !== DPKG_HEALTH_LOOK.probes[2].command) return { stdout: "", code: cmd.startsWith("pgrep") ? 1 : 0 };
    const left = Object.entries(this.state.unsettled ?? {});
    return { stdout: left.map(([n, p]) => `${n}\tamd64\tinstall ok ${p.status}\t${p.version}\n`).join(""), code: 0 };
  }

  /** The dpkg repair's script (dpkg-repair.ts): dpkg --configure -a finishes every package left configuring. */
  private repair(): Reply {
    const s = this.state;
    const left = Object.entries(s.unsettled ?? {});
    const before = [...Object.keys(s.installed), ...left.map(([n]) => n)].map((n) => `ii \t${n}\n`).join("");
    for (const [n, p] of left) s.installed[n] = p.version;
    delete s.unsettled;
    this.transaction = { "before.packages": before, status: left.map(([n]) => `status: ${n}: installed\n`).join("") };
    return { stdout: left.map(([n, p]) => `Setting up ${n} (${p.version}) ...\n`).join("") };
  }

  /**
   * apt-get install of the specs (options quoted, left out): each must be offered by the lists at the
   * candidate or the pinned version, else apt refuses the whole transaction as apt does, changing nothing.
   */
  private install(cmd: string): Reply {
    const s = this.state;
    const words = cmd
      .replace(/'[^']*'/g, "")
      .trim()
      .split(/\s+/);
    const last = words.map((w) => w.endsWith("--force-confold")).lastIndexOf(true);
    const specs = words.slice(last + 1).filter((w) => w !== "--allow-downgrades");
    const picked: [string, string][] = [];
    for (const spec of specs) {
      const [name, pin] = spec.split("=");
      const versions = s.lists?.[name];
      if (!versions) return { code: 100, stderr: `E: Unable to locate package ${name}\n` };
      if (pin && !versions.includes(pin))
        return { code: 100, stderr: `E: Version '${pin}' for '${name}' was not found\n` };
      picked.push([name, pin ?? versions[0]]);
    }
    const before = Object.keys(s.installed)
      .map((n) => `ii \t${n}\n`)
      .join("");
    for (const [name, version] of picked) s.installed[name] = version;
    this.transaction = {
      "before.packages": before,
      status: picked.map(([n]) => `status: ${n}: installed\n`).join(""),
    };
    return { stdout: picked.map(([n, v]) => `Setting up ${n} (${v}) ...\n`).join("") };
  }
}
