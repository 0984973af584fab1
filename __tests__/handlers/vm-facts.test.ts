// The facts layer's framing: whatever bytes a probe prints (marker lines, another probe's frame, NULs,
// invalid UTF-8, no final line break), each probe's answer comes back exactly, under its own name.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defineLook, followedByLook, LookCorrupted, lookAtEnd } from "../../handlers/common/vm-facts";
import { rng } from "../support/seeded-random";

const NASTY = ["\n", "\0", "@@@end\n", "--- host\n", "b 0\n", "a Zm9v\n", "=", " ", "\r", "\xff", "é", "\n\n"];

function randomBytes(next: () => number): Buffer {
  const parts: Buffer[] = [];
  const n = Math.floor(next() * 12);
  for (let i = 0; i < n; i++) {
    if (next() < 0.5) parts.push(Buffer.from(NASTY[Math.floor(next() * NASTY.length)], "latin1"));
    else parts.push(Buffer.from(Array.from({ length: Math.floor(next() * 20) }, () => Math.floor(next() * 256))));
  }
  return Buffer.concat(parts);
}

describe("a look's framing", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vm-facts-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test("300 random contents per probe, three probes a look: every answer exact, every status kept", () => {
    const next = rng(20261205);
    for (let round = 0; round < 100; round++) {
      const files = [0, 1, 2].map((i) => {
        const f = path.join(dir, `f${i}`);
        const bytes = randomBytes(next);
        fs.writeFileSync(f, bytes);
        return { f, bytes, code: Math.floor(next() * 4) };
      });
      const look = defineLook("test", [
        { name: "a", command: `cat '${files[0].f}'; exit ${files[0].code}`, writer: "anyone", use: "test" },
        { name: "b", command: `cat '${files[1].f}'; exit ${files[1].code}`, writer: "service", use: "test" },
        { name: "c:x", command: `cat '${files[2].f}'; exit ${files[2].code}`, writer: "root", use: "test" },
      ] as const);
      const stdout = execFileSync("sh", ["-c", look.script]).toString("utf8");
      const facts = look.parse(stdout);
      (["a", "b", "c:x"] as const).forEach((name, i) => {
        const f = facts.get(name);
        expect({ round, name, text: f.text, code: f.code }).toEqual({
          round,
          name,
          text: files[i].bytes.toString("utf8"),
          code: files[i].code,
        });
      });
      expect(facts.get("c:x").writer).toBe("root");
    }
  });

  test("stderr is dropped unless asked for, and then framed with stdout", () => {
    const look = defineLook("test", [
      { name: "quiet", command: "echo out; echo err >&2", writer: "root", use: "test" },
      { name: "loud", command: "echo out; echo err >&2", writer: "root", use: "test", stderr: true },
    ] as const);
    const facts = look.parse(execFileSync("sh", ["-c", look.script]).toString());
    expect(facts.get("quiet").text).toBe("out\n");
    expect(facts.get("loud").text).toBe("out\nerr\n");
  });

  test("output that is not the script's frames is refused as a whole", () => {
    const look = defineLook("the test look", [
      { name: "a", command: "true", writer: "root", use: "test" },
      { name: "b", command: "true", writer: "root", use: "test" },
    ] as const);
    const good = execFileSync("sh", ["-c", look.script]).toString();
    expect(() => look.parse(good)).not.toThrow();
    const [a, b] = good.trim().split("\n");
    for (const bad of ["", a, `${b}\n${a}`, `${a}\n${a}`, `${a}\n${b}\n${b}`, `${a}\nb !!`, `${a}\nb ${"Zm9v"}`]) {
      expect(() => look.parse(bad)).toThrow(LookCorrupted);
    }
  });

  test("a probe with readAs runs as that user: a link its owner plants reaches only what that user may read", () => {
    if (process.getuid?.() !== 0) throw new Error("this test runs runuser, which needs root (CI runs as root)");
    const secret = path.join(dir, "root-only");
    fs.writeFileSync(secret, "FATAL: root's words\n", { mode: 0o600 });
    const open = path.join(dir, "open");
    fs.writeFileSync(open, "anyone's words\n", { mode: 0o644 });
    fs.chmodSync(dir, 0o755);
    const look = defineLook("test", [
      { name: "as-root", command: `cat ${secret}`, writer: "service", use: "test" },
      { name: "as-nobody", command: `cat ${secret}`, writer: "service", readAs: "nobody", use: "test" },
      { name: "open", command: `cat '${open}' | tr a-z A-Z`, writer: "service", readAs: "nobody", use: "test" },
    ] as const);
    const facts = look.parse(execFileSync("sh", ["-c", look.script]).toString());
    expect(facts.get("as-root").text).toBe("FATAL: root's words\n");
    expect(facts.get("as-nobody")).toMatchObject({ text: "", code: 1 });
    expect(facts.get("open")).toMatchObject({ text: "ANYONE'S WORDS\n", code: 0 });
    // A look run as another user (the TLS look runs as postgres, where runuser is refused) reads as that user.
    const asNobody = look.parse(execFileSync("runuser", ["-u", "nobody", "--", "sh", "-c", look.script]).toString());
    expect(asNobody.get("as-root")).toMatchObject({ text: "", code: 1 });
    expect(asNobody.get("as-nobody")).toMatchObject({ text: "", code: 1 });
    expect(asNobody.get("open")).toMatchObject({ text: "ANYONE'S WORDS\n", code: 0 });
  });

  test("a probe's env is exported in its own subshell, any value exactly, and nowhere else", () => {
    const odd = `it's "q" $HOME \\ ;x`;
    const look = defineLook("test", [
      { name: "a", command: 'printf %s "$VMI_X"', writer: "root", use: "test", env: { VMI_X: odd } },
      { name: "b", command: 'printf %s "${VMI_X-unset}"', writer: "root", use: "test" },
      { name: "c", command: 'printf %s "$VMI_X"', writer: "root", use: "test", env: { VMI_X: "5432" } },
    ] as const);
    const facts = look.parse(execFileSync("sh", ["-c", look.script]).toString());
    expect(facts.get("a").text).toBe(odd);
    expect(facts.get("b").text).toBe("unset");
    expect(facts.get("c").text).toBe("5432");
    expect(() =>
      defineLook("x", [{ name: "a", command: "true", writer: "root", use: "", env: { "A;B": "1" } }]),
    ).toThrow(/exports "A;B", not a name/);
  });

  test("names are checked where a look is declared", () => {
    expect(() => defineLook("x", [{ name: "a", command: "true", writer: "root", readAs: "a b", use: "" }])).toThrow(
      /not a user name/,
    );
    expect(() => defineLook("x", [{ name: "A B", command: "true", writer: "root", use: "" }])).toThrow(/probe name/);
    expect(() =>
      defineLook("x", [
        { name: "a", command: "true", writer: "root", use: "" },
        { name: "a", command: "true", writer: "root", use: "" },
      ]),
    ).toThrow(/twice/);
  });
});

describe("a look after a command in the same exec (followedByLook)", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vm-facts-after-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const look = defineLook("after", [
    { name: "a", command: `cat '${path.join(dir, "a")}'`, writer: "root", use: "test" },
    { name: "b", command: "echo b", writer: "root", use: "test" },
  ] as const);
  const run = (script: string) => {
    try {
      return { stdout: execFileSync("sh", ["-c", script]).toString("utf8"), code: 0 };
    } catch (e) {
      const err = e as { stdout: Buffer; status: number };
      return { stdout: err.stdout.toString("utf8"), code: err.status };
    }
  };

  test("200 random outputs of the command (frames of the look among them): its output and the facts exact", () => {
    const next = rng(20261206);
    for (let round = 0; round < 200; round++) {
      const out = randomBytes(next);
      // The command may print the look's own frames, forged: they stay its output.
      const forged = round % 3 === 0 ? Buffer.from(`a ${Buffer.from("forged\n0").toString("base64")}\n`) : undefined;
      const said = forged ? Buffer.concat([out, forged]) : out;
      fs.writeFileSync(path.join(dir, "out"), said);
      const content = randomBytes(next);
      fs.writeFileSync(path.join(dir, "a"), content);
      const code = Math.floor(next() * 3);
      const r = run(followedByLook(`cat '${path.join(dir, "out")}'; exit ${code}`, look));
      const seen = lookAtEnd(look, r.stdout);
      const text = said.toString("utf8");
      expect({ round, code: r.code }).toEqual({ round, code });
      expect({ round, before: seen.before }).toEqual({ round, before: text });
      expect({ round, a: seen.facts?.get("a").text }).toEqual({ round, a: content.toString("utf8") });
      expect(seen.facts?.get("b")).toMatchObject({ text: "b\n", code: 0 });
    }
  });

  test("an exec cut short, or one that is not the look's, gives no facts and all its output", () => {
    fs.writeFileSync(path.join(dir, "a"), "x");
    const whole = run(followedByLook("echo done", look)).stdout;
    expect(lookAtEnd(look, whole).facts?.get("a").text).toBe("x");
    const lines = whole.split("\n");
    for (const cut of [lines.slice(0, -2).join("\n"), "done\n", "", whole.replace("b ", "c ")]) {
      expect(lookAtEnd(look, cut)).toEqual({ before: cut, facts: undefined });
    }
  });

  test("an exit in the command ends only the command: the look still runs", () => {
    fs.writeFileSync(path.join(dir, "a"), "y");
    const r = run(followedByLook("echo gone; exit 7; echo never", look));
    expect(r.code).toBe(7);
    expect(lookAtEnd(look, r.stdout)).toMatchObject({ before: "gone\n" });
    expect(lookAtEnd(look, r.stdout).facts?.get("a").text).toBe("y");
  });
});
