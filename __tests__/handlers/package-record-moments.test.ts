// Issue 32 finding 1, as a class: root installs a package (with its own system user and group) at each
// moment of an install-packages job; the inventory then holds exactly what the job's own apt transaction
// brought, never root's. The double is a small stateful VM that answers looks by probe name and plays
// dpkg's hooks when apt-get is given them, so it stands for the VM whatever way the job records.
import { type Connection, ExecRemote, type RunOptions, type RunResult } from "../../handlers/common/exec";
import { runHandler } from "../../handlers/common/handler-kit";
import { PACKAGES_FILE } from "../../handlers/common/package-inventory";
import { handler } from "../../handlers/install-packages/handler";
import { SecretScrubber } from "../../lib/shared/secrets";
import { DEBIAN_12, dpkgLine, policyBlock } from "./support/fixtures";
import { answerFollowed, answerLook, answerWithTransaction, probeNames } from "./support/look-answers";
import { renameOf } from "./support/remote-writes";
import { TEST_ENV } from "./support/run-scripted";

const MOMENTS = [
  "before inspect",
  "during apt-get update",
  "while apt-get waits for the lock",
  "after apt-get, before the job looks again",
  "during verify",
] as const;
type Moment = (typeof MOMENTS)[number];

/** What apt-get install of each name brings (dependencies first), and the system account jq's postinst makes. */
const BRINGS: Record<string, string[]> = { jq: ["libjq1", "jq"] };
const REPO: Record<string, string> = { jq: "1.6-2.1", libjq1: "1.6-2.1", tree: "2.1.0-1" };

class SharedVm implements Connection {
  readonly target = "ubuntu@192.0.2.10:22";
  readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`;
  readonly dpkg = new Map<string, string>([
    ["curl", "ii "],
    ["libc-bin", "ii "],
    ["gone", "rc "],
  ]);
  readonly groups = new Set(["root", "adm"]);
  readonly users = new Set(["root"]);
  /** Files of the VM's root-only directories a job may write and read back (by path). */
  readonly files = new Map<string, string>();
  inventory?: string;
  rootInstalled = false;
  private queries = 0;

  constructor(readonly moment: Moment) {}

  async close(): Promise<void> {}

  /** Root's own apt-get install tree, with the account its postinst makes: not the job's. */
  private root(at: Moment): void {
    if (at !== this.moment || this.rootInstalled) return;
    this.rootInstalled = true;
    this.dpkg.set("tree", "ii ");
    this.groups.add("treeadm");
    this.users.add("treeadm");
  }

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    const reply = this.answer(command, opts);
    const exec = new ExecRemote(
      async () => ({ code: reply.code ?? 0, stdout: Buffer.from(reply.stdout ?? ""), stderr: Buffer.from("") }),
      { target: this.target, user: "ubuntu", secrets: new SecretScrubber() },
    );
    return exec.run(command, opts);
  }

  private snapshot(): Record<string, string> {
    return {
      packages: [...this.dpkg].map(([n, a]) => `${a}\t${n}\n`).join(""),
      groups: [...this.groups].map((g) => `${g}:x:100:\n`).join(""),
      users: [...this.users].map((u) => `${u}:x:100:100::/:/usr/sbin/nologin\n`).join(""),
    };
  }

  private answer(command: string, opts: RunOptions): { code?: number; stdout?: string } {
    const followed =
      answerWithTransaction(command, (part) => this.answer(part, opts)) ??
      answerFollowed(command, (c) => (/^apt-(get|cache) /.test(c) ? this.answer(c, opts) : undefined));
    if (followed) return followed;
    const names = probeNames(command);
    if (names) return { stdout: answerLook(command, this.lookAnswers(names)) };
    let m: RegExpExecArray | null;
    if ((m = /^dpkg-query -W -f='\$\{Package\}\\t\$\{Status\}\\t\$\{Version\}\\n' (.*)$/.exec(command))) {
      this.root(++this.queries === 1 ? "before inspect" : "during verify");
      const asked = m[1].split(" ");
      const there = asked.filter((n) => this.dpkg.get(n) === "ii ");
      return { code: there.length === asked.length ? 0 : 1, stdout: there.map((n) => dpkgLine(n, REPO[n])).join("") };
    }
    if (command.startsWith("apt-get update")) {
      this.root("during apt-get update");
      return { stdout: "Hit:1 http://deb.debian.org/debian bookworm InRelease\n" };
    }
    if ((m = /^apt-cache policy (.*)$/.exec(command)))
      return {
        stdout: m[1]
          .split(" ")
          .map((n) => (REPO[n] ? policyBlock(n, REPO[n]) : ""))
          .join(""),
      };
    if (opts.sudo && command.includes("apt-get") && command.includes(" install ")) return this.install(command);
    if (opts.sudo && command.includes(renameOf(PACKAGES_FILE))) {
      this.inventory = String(opts.stdin);
      return {};
    }
    throw new Error(`SharedVm: unexpected command ${JSON.stringify(command.slice(0, 200))}`);
  }

  private lookAnswers(names: string[]): Record<string, string | { code: number }> {
    const now = this.snapshot();
    const file = (path: string) => {
      const text = this.files.get(path);
      return text === undefined ? { code: 3 } : text;
    };
    const answers: Record<string, string | { code: number }> = {};
    for (const n of names) {
      if (n === "os_release") answers[n] = DEBIAN_12;
      else if (n === "inventory.packages") answers[n] = this.inventory ?? { code: 3 };
      else if (n === "names.packages") answers[n] = now.packages;
      else if (n.startsWith("names.")) answers[n] = now[n.slice(6)].replace(/:[^\n]*/g, "");
      else if (n.startsWith("apt_tx.")) answers[n] = file(`/run/vm-install/apt-transaction/${n.slice(7)}`);
    }
    if (names[0] === "os_release") this.root("before inspect");
    return answers;
  }

  /** apt-get install: root's transaction first when it held the lock, then the job's own, with dpkg's hooks. */
  private install(command: string): { stdout: string } {
    this.root("while apt-get waits for the lock");
    const dir = "/run/vm-install/apt-transaction";
    const hooks = command.includes("--pre-invoke=") && command.includes("--status-logger=");
    if (command.includes(`rm -rf ${dir}`)) for (const k of [...this.files.keys()]) this.files.delete(k);
    const put = (file: string, text: string) => hooks && this.files.set(`${dir}/${file}`, text);
    const before = this.snapshot();
    for (const [k, v] of Object.entries(before)) put(`before.${k}`, v);
    const specs = command.split(/\s+/).filter((w) => BRINGS[w]);
    const status: string[] = ["status: libc-bin: triggers-pending"];
    for (const name of specs.flatMap((s) => BRINGS[s])) {
      this.dpkg.set(name, "ii ");
      status.push(`status: ${name}:amd64: half-installed`, `status: ${name}:amd64: unpacked`);
      status.push(`status: ${name}:amd64: installed`);
    }
    this.groups.add("jqsvc");
    this.users.add("jqsvc");
    status.push("status: libc-bin: installed");
    put("status", `${status.join("\n")}\n`);
    const after = this.snapshot();
    put("after.groups", after.groups);
    put("after.users", after.users);
    this.root("after apt-get, before the job looks again");
    return { stdout: "Setting up jq (1.6-2.1) ...\n" };
  }
}

describe("what an install records while root installs a package of its own", () => {
  for (const moment of MOMENTS) {
    it(`root's apt-get install tree ${moment}: only the job's own transaction is recorded`, async () => {
      const vm = new SharedVm(moment);
      const result = await runHandler(
        handler,
        { packages: ["jq"], update: true },
        {
          env: TEST_ENV,
          connect: async () => vm,
          write: () => undefined,
          secrets: new SecretScrubber(),
        },
      );
      expect(vm.rootInstalled).toBe(true);
      expect(result).toMatchObject({ installed: ["jq"], changed: true });
      expect(JSON.parse(vm.inventory ?? "{}").installers).toEqual({
        packages: { packages: ["jq", "libjq1"], groups: ["jqsvc"], users: ["jqsvc"], files: [] },
      });
    });
  }
});
