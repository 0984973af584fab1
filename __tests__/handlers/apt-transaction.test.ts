// What an install records (apt-transaction.ts): the packages its own dpkg runs touched and left on the VM
// that were not there before the first of them, the groups and users that appeared between the first and the
// last; the hooks themselves run in sh here, against stand-ins for dpkg-query and getent.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  recordedStep,
  TRANSACTION_DIR,
  TRANSACTION_LOOK,
  TRANSACTION_OPTIONS,
  type TransactionFacts,
  transactionFrom,
} from "../../handlers/common/apt-transaction";
import { CommandError, type Remote } from "../../handlers/common/exec";
import { answerLook } from "./support/look-answers";

const root = (name: string, text: string | undefined) =>
  ({ name, writer: "root", code: text === undefined ? 3 : 0, text: text ?? "" }) as const;
const facts = (files: Partial<Record<keyof TransactionFacts, string>>): TransactionFacts => ({
  "before.time": root("before.time", files["before.time"]),
  "before.log_size": root("before.log_size", files["before.log_size"]),
  "logged.first": root("logged.first", files["logged.first"]),
  "before.packages": root("before.packages", files["before.packages"]),
  "before.groups": root("before.groups", files["before.groups"]),
  "before.users": root("before.users", files["before.users"]),
  status: root("status", files.status),
  "after.groups": root("after.groups", files["after.groups"]),
  "after.users": root("after.users", files["after.users"]),
});
const status = (...lines: string[]) => `${lines.map((l) => `status: ${l}`).join("\n")}\n`;

describe("transactionFrom", () => {
  it("takes what dpkg touched and left there that was not there before: arch dropped, rc and n counted as absent", () => {
    const record = transactionFrom(
      facts({
        "before.packages": "ii \tlibc-bin\nrc \tjq\nun \tlibonig5\nii \tcurl\n",
        status: status(
          "libc-bin: triggers-pending",
          "libonig5:amd64: half-installed",
          "libonig5:amd64: installed",
          "jq: unpacked",
          "jq: installed",
          "curl:amd64: installed",
          "libc-bin: installed",
        ),
      }),
    );
    expect(record).toEqual({ packages: ["jq", "libonig5"], groups: [], users: [] });
  });

  it("a package dpkg was killed on is recorded as it was left; one the transaction removed again is not", () => {
    const record = transactionFrom(
      facts({
        "before.packages": "ii \tcurl\n",
        status: status("a: half-installed", "b: installed", "b: half-installed", "b: config-files", "c: not-installed"),
      }),
    );
    expect(record.packages).toEqual(["a"]);
  });

  it("groups and users: there after the last dpkg run and not before the first (getent lines)", () => {
    const record = transactionFrom(
      facts({
        "before.packages": "",
        status: status("postgresql-common: installed"),
        "before.groups": "root:x:0:\nadm:x:4:\n",
        "after.groups": "root:x:0:\nadm:x:4:\npostgres:x:110:\nssl-cert:x:111:postgres\n",
        "before.users": "root:x:0:0::/root:/bin/sh\n",
        "after.users": "root:x:0:0::/root:/bin/sh\npostgres:x:105:110::/var/lib/postgresql:/bin/bash\n",
      }),
    );
    expect(record).toEqual({ packages: ["postgresql-common"], groups: ["postgres", "ssl-cert"], users: ["postgres"] });
  });

  it("no dpkg run (a lock error, nothing to do): nothing, with or without the other files", () => {
    expect(transactionFrom(facts({}))).toEqual({ packages: [], groups: [], users: [] });
    expect(transactionFrom(facts({ "before.packages": "ii \tcurl\n", status: "" }))).toEqual({
      packages: [],
      groups: [],
      users: [],
    });
  });

  it("no groups or users without both ends (dpkg killed before its first post-invoke)", () => {
    const f = facts({ "before.packages": "", status: status("x: unpacked"), "before.groups": "root:x:0:\n" });
    expect(transactionFrom(f)).toEqual({ packages: ["x"], groups: [], users: [] });
  });

  it("dpkg changed packages but the list before is missing: an error, never everything taken for ours", () => {
    expect(() => transactionFrom(facts({ status: status("jq: installed") }))).toThrow(
      /before\.packages is missing .*cannot be told from what was there/,
    );
  });

  it("the transaction's time: its first line in dpkg.log, else the pre-invoke hook's clock, else none", () => {
    const base = { "before.packages": "", status: status("jq: installed") };
    const at = (files: Partial<Record<keyof TransactionFacts, string>>) =>
      transactionFrom(facts({ ...base, ...files })).at;
    expect(at({ "before.time": "2026-12-05 23:18:35\n", "logged.first": "2026-12-05 23:18:36\n" })).toBe(
      "2026-12-05 23:18:36",
    );
    expect(at({ "before.time": "2026-12-05 23:18:35\n", "logged.first": "\n" })).toBe("2026-12-05 23:18:35");
    expect(at({ "before.time": "yesterday\n" })).toBeUndefined();
  });

  it("a file that could not be read is an error", () => {
    const f = { ...facts({}), status: { ...root("status", ""), code: 1 } };
    expect(() => transactionFrom(f)).toThrow(`reading ${TRANSACTION_DIR} failed: status exited 1`);
  });
});

describe("the hooks apt-get hands dpkg", () => {
  let dir: string;
  let bin: string;
  const option = (flag: string) => {
    const o = TRANSACTION_OPTIONS.find((x) => x.startsWith(`Dpkg::Options::=${flag}=`))!;
    return o
      .slice(`Dpkg::Options::=${flag}=`.length)
      .replaceAll(TRANSACTION_DIR, dir)
      .replaceAll("/var/log/dpkg.log", path.join(dir, "..", "dpkg.log"));
  };
  const sh = (script: string, env: Record<string, string> = {}) =>
    execFileSync("sh", ["-c", script], { env: { PATH: `${bin}:/usr/bin:/bin`, ...env }, input: "" });
  const stub = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });

  beforeEach(() => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), "apt-tx-"));
    dir = path.join(base, "tx");
    bin = path.join(base, "bin");
    fs.mkdirSync(dir);
    fs.mkdirSync(bin);
    stub("dpkg-query", 'cat "$STATE"');
    stub("getent", '[ -n "$FAIL" ] && exit 2; echo "$1-of-$STATE"');
  });

  it("pre-invoke keeps the first dpkg run's view; post-invoke the last one's; the logger appends", () => {
    const state = path.join(dir, "..", "state");
    fs.writeFileSync(state, "ii \tcurl\n");
    sh(option("--pre-invoke"), { STATE: state });
    fs.writeFileSync(state, "ii \tcurl\nii \tjq\n");
    sh(option("--pre-invoke"), { STATE: state });
    sh(option("--post-invoke"), { STATE: "one" });
    sh(option("--post-invoke"), { STATE: "two" });
    execFileSync("sh", ["-c", option("--status-logger")], { input: "status: jq: installed\n" });
    execFileSync("sh", ["-c", option("--status-logger")], { input: "status: x: unpacked\n" });
    const read = (f: string) => fs.readFileSync(path.join(dir, f), "utf8");
    expect(read("before.packages")).toBe("ii \tcurl\n");
    expect(read("after.groups")).toBe("group-of-two\n");
    expect(read("status")).toBe("status: jq: installed\nstatus: x: unpacked\n");
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it.each([
    ["a log with lines before the job's", "2026-12-01 10:00:00 startup archives unpack\n"],
    ["no log yet (the job's transaction begins it)", undefined],
  ])("the first line the first dpkg run wrote to dpkg.log is the transaction's time: %s", (_, before) => {
    const log = path.join(dir, "..", "dpkg.log");
    if (before !== undefined) fs.writeFileSync(log, before);
    const state = path.join(dir, "..", "state");
    fs.writeFileSync(state, "ii \tcurl\n");
    sh(option("--pre-invoke"), { STATE: state });
    fs.appendFileSync(
      log,
      "2026-12-05 23:18:36 startup archives unpack\n2026-12-05 23:18:36 install jq:amd64 <none> 1.6\n",
    );
    sh(option("--post-invoke"), { STATE: "one" });
    fs.appendFileSync(log, "2026-12-05 23:18:40 startup packages configure\n");
    sh(option("--post-invoke"), { STATE: "two" });
    expect(fs.readFileSync(path.join(dir, "logged.first"), "utf8")).toBe("2026-12-05 23:18:36\n");
  });

  it("a hook that cannot list groups fails (dpkg then stops) and leaves no list at all", () => {
    expect(() => sh(option("--pre-invoke"), { STATE: "/dev/null", FAIL: "1" })).toThrow();
    expect(fs.readdirSync(dir).filter((f) => !f.endsWith(".tmp"))).toEqual([]);
  });
});

describe("recordedStep", () => {
  const remote = (stdout: string): Remote => ({
    run: async () => ({ code: 0, stdout, stderr: "", durationMs: 0 }),
  });
  const recorded = answerLook(TRANSACTION_LOOK, {
    "apt_tx.before.packages": "",
    "apt_tx.status": "status: jq: installed\n",
  });
  const aptFailed = new CommandError("apt-get install failed", "apt-get install jq", 100, "", "E: dpkg error", 5);

  it("records after a failed apt-get too (a failed batch may have installed dependencies); apt's error stands", async () => {
    const seen: string[][] = [];
    const step = recordedStep(remote(recorded), () => Promise.reject(aptFailed), {
      probes: [],
      record: async (r) => void seen.push(r.packages),
    });
    await expect(step).rejects.toBe(aptFailed);
    expect(seen).toEqual([["jq"]]);
  });

  it("a record that cannot be kept fails a successful install, as a plain error (not apt's own failure)", async () => {
    const step = recordedStep(remote(recorded), async () => "ok", {
      probes: [],
      record: () => Promise.reject(new Error("disk full")),
    });
    const err = await step.catch((e: Error) => e);
    expect(err).not.toBeInstanceOf(CommandError);
    expect(String(err)).toMatch(/apt-get install succeeded, but recording what it brought failed: disk full/);
  });
});
