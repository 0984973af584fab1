// The one remote write (handlers/common/remote-file.ts), its fragment run for real by sh and bash in a scratch
// directory as the current user: modes given and kept, links at the path replaced (their targets untouched),
// stdin cut short, the temporary file's mode while it fills, signals, and root's refusal of directories others
// can change (where the suite runs as root). Then the spec's own checks and the exec it makes.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compareFragment, type RemoteFile, writeFragment, writeRemoteFile } from "../../handlers/common/remote-file";
import { ScriptedRemote } from "./support/scripted-remote";

const me = { user: os.userInfo().username };
const asRoot = process.getuid?.() === 0;
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "remote-file-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

// Modes as given, not narrowed by the runner's umask (the fragment must not lean on one either).
let umask: number;
beforeAll(() => {
  umask = process.umask(0);
});
afterAll(() => process.umask(umask));
const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777;
const file = (name: string, content: string, mode: RemoteFile["mode"]): RemoteFile => ({
  path: path.join(dir, name),
  content,
  writer: me,
  mode,
});
/** Runs `script` with `shell`; its status, stderr and stdout. */
const run = (shell: string, script: string, input: string | Buffer) => {
  const r = spawnSync(shell, ["-c", script], { input });
  return { code: r.status, stderr: r.stderr.toString(), stdout: r.stdout.toString() };
};

describe.each(["sh", "bash"])("the fragment, run by %s", (shell) => {
  const write = (f: RemoteFile, input: string | Buffer = f.content) => run(shell, writeFragment(f), input);

  it("gives a new file its mode, given or the one to keep's default", () => {
    for (const [name, mode] of [
      ["a", "0640"],
      ["b", { keep: "0604" }],
    ] as const) {
      expect(write(file(name, "text\n", mode)).code).toBe(0);
      expect(fs.readFileSync(path.join(dir, name), "utf8")).toBe("text\n");
      expect(modeOf(path.join(dir, name))).toBe(name === "a" ? 0o640 : 0o604);
    }
  });

  it("keeps the mode of the writer's own file; a given mode replaces it", () => {
    const p = path.join(dir, "f");
    fs.writeFileSync(p, "old\n", { mode: 0o600 });
    fs.chmodSync(p, 0o660);
    expect(write(file("f", "new\n", { keep: "0644" })).code).toBe(0);
    expect([fs.readFileSync(p, "utf8"), modeOf(p)]).toEqual(["new\n", 0o660]);
    expect(write(file("f", "newer\n", "0600")).code).toBe(0);
    expect([fs.readFileSync(p, "utf8"), modeOf(p)]).toEqual(["newer\n", 0o600]);
  });

  it("keeps no setuid, setgid or sticky bit: the default mode instead", () => {
    const p = path.join(dir, "f");
    fs.writeFileSync(p, "old\n");
    fs.chmodSync(p, 0o4755);
    expect(write(file("f", "new\n", { keep: "0644" })).code).toBe(0);
    expect(modeOf(p)).toBe(0o644);
  });

  (asRoot ? it : it.skip)("keeps no mode of another owner's file (root's run: the file chowned away)", () => {
    const p = path.join(dir, "f");
    fs.writeFileSync(p, "old\n", { mode: 0o666 });
    fs.chownSync(p, 65534, 65534);
    expect(write(file("f", "new\n", { keep: "0640" })).code).toBe(0);
    expect([modeOf(p), fs.statSync(p).uid]).toEqual([0o640, 0]);
  });

  it.each([
    ["a file", (t: string) => fs.writeFileSync(t, "target\n", { mode: 0o666 })],
    ["a directory", (t: string) => fs.mkdirSync(t)],
    ["nothing", () => undefined],
  ])("replaces a link at the path to %s; the target is untouched", (_what, make) => {
    for (const mode of ["0600", { keep: "0640" }] as const) {
      const target = path.join(dir, "target");
      make(target);
      const p = path.join(dir, "link");
      fs.symlinkSync(target, p);
      expect(write(file("link", "mine\n", mode)).code).toBe(0);
      expect(fs.lstatSync(p).isFile()).toBe(true);
      expect([fs.readFileSync(p, "utf8"), modeOf(p)]).toEqual(["mine\n", typeof mode === "string" ? 0o600 : 0o640]);
      if (fs.existsSync(target) && fs.statSync(target).isFile()) {
        expect([fs.readFileSync(target, "utf8"), modeOf(target)]).toEqual(["target\n", 0o666]);
      }
      if (fs.existsSync(target) && fs.statSync(target).isDirectory()) expect(fs.readdirSync(target)).toEqual([]);
      fs.rmSync(p);
      fs.rmSync(target, { recursive: true, force: true });
    }
  });

  it("a stdin cut short fails, names the path, leaves the old file and no temporary file", () => {
    const p = path.join(dir, "f");
    fs.writeFileSync(p, "old\n");
    const r = write(file("f", "the whole file\n", "0644"), "the whole");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`could not write ${p}`);
    expect(fs.readFileSync(p, "utf8")).toBe("old\n");
    expect(fs.readdirSync(dir)).toEqual(["f"]);
  });

  it("a directory at the path is not written into: fails, temporary file removed", () => {
    fs.mkdirSync(path.join(dir, "f"));
    expect(write(file("f", "x\n", "0644")).code).toBe(1);
    expect(fs.readdirSync(dir)).toEqual(["f"]);
    expect(fs.readdirSync(path.join(dir, "f"))).toEqual([]);
  });

  it("several files share one stdin in order, each exactly its bytes (binary, multibyte, empty)", () => {
    const parts = [Buffer.from([0, 255, 10, 13]), Buffer.from("ünï\n"), Buffer.alloc(0), Buffer.from("z")];
    const specs = parts.map((content, i) => ({ ...file(`f${i}`, "", "0644"), content }));
    const r = run(shell, `${specs.map(writeFragment).join(" && ")} && echo done`, Buffer.concat(parts));
    expect(r.stdout).toBe("done\n");
    for (const [i, content] of parts.entries()) expect(fs.readFileSync(specs[i].path).equals(content)).toBe(true);
  });

  it("runs the same under set -e (a script of several steps): a missing file is no failure", () => {
    const specs = [file("a", "a\n", { keep: "0640" }), { ...file("b", "b\n", "0644"), unlessSame: true }];
    const r = run(shell, `set -e; ${specs.map(writeFragment).join("; ")}; echo "done $w"`, "a\nb\n");
    expect([r.stdout, modeOf(specs[0].path), modeOf(specs[1].path)]).toEqual(["done new\n", 0o640, 0o644]);
  });

  it("unlessSame says what differed and leaves an equal file alone", () => {
    const f = { ...file("f", "same\n", "0644"), unlessSame: true };
    const w = (spec: RemoteFile = f) => run(shell, `${writeFragment(spec)} && echo "w=$w"`, spec.content).stdout;
    expect(w()).toBe("w=new\n");
    const inode = fs.statSync(f.path).ino;
    expect(w()).toBe("w=\n");
    expect(fs.statSync(f.path).ino).toBe(inode);
    fs.chmodSync(f.path, 0o600);
    expect([w(), modeOf(f.path)]).toEqual(["w=mode\n", 0o644]);
    expect(w({ ...f, content: "other\n" })).toBe("w=content\n");
    fs.rmSync(f.path);
    fs.symlinkSync(path.join(dir, "nowhere"), f.path);
    expect(w()).toBe("w=content\n");
    expect(fs.readdirSync(dir)).toEqual(["f"]);
  });

  it("compareFragment says what unlessSame's write would, in every state, and writes nothing (a check's)", () => {
    const f = { ...file("f", "same\n", "0644"), unlessSame: true };
    const second = { ...file("g", "second\n", "0644"), unlessSame: true };
    const states: Record<string, () => void> = {
      absent: () => {},
      same: () => fs.writeFileSync(f.path, "same\n", { mode: 0o644 }),
      mode: () => fs.writeFileSync(f.path, "same\n", { mode: 0o600 }),
      link: () => fs.symlinkSync(path.join(dir, "nowhere"), f.path),
      directory: () => fs.mkdirSync(f.path),
    };
    const listing = () => fs.readdirSync(dir).map((n) => `${n} ${fs.lstatSync(path.join(dir, n)).mode}`);
    // A longer other content: cmp stops at its first byte, the rest of its bytes must still leave stdin.
    for (const [state, arrange] of Object.entries(states))
      for (const content of ["same\n", "a longer other text\n"]) {
        fs.rmSync(dir, { recursive: true });
        fs.mkdirSync(dir);
        arrange();
        const before = listing();
        const spec = { ...f, content };
        const script = [spec, second].map((s) => `${compareFragment(s)} && printf '%s,' "$w"`).join(" && ");
        const foreseen = run(shell, script, content + second.content).stdout;
        expect(listing()).toEqual(before);
        const written = run(shell, `${writeFragment(spec)} && echo "$w"`, content);
        const said = state === "directory" ? "content" : written.stdout.trim();
        expect([state, content, foreseen]).toEqual([state, content, `${said},new,`]);
      }
    const unknown = (s: RemoteFile) => run(shell, `${compareFragment({ ...s, content: undefined })} && echo "$w"`, "");
    expect([unknown(f).stdout, unknown(second).stdout]).toEqual(["unknown\n", "new\n"]);
  });
});

describe("the temporary file", () => {
  /** Whether `pid` has a child running `command` (Linux's /proc). */
  const hasChild = (pid: number, command: string) =>
    fs.readdirSync("/proc").some((n) => {
      try {
        const stat = fs.readFileSync(`/proc/${n}/stat`, "utf8");
        return stat.startsWith(`${n} (${command}) `) && stat.split(") ")[1].split(" ")[1] === String(pid);
      } catch {
        return false;
      }
    });
  /** Starts a write whose stdin stays open; resolves with the temporary file once head reads into it. */
  const started = async (f: RemoteFile) => {
    const child = spawn("sh", ["-c", writeFragment(f)], { detached: true, stdio: ["pipe", "ignore", "pipe"] });
    child.stdin.write(String(f.content).slice(0, 3));
    for (let i = 0; i < 500; i++) {
      const temp = fs.readdirSync(dir).find((n) => n.startsWith(`.${path.basename(f.path)}.`));
      if (temp && hasChild(child.pid as number, "head")) return { child, temp: path.join(dir, temp) };
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error("no temporary file appeared");
  };
  const ended = (child: ReturnType<typeof spawn>) => new Promise<number | null>((r) => child.on("close", r));

  it.each(["0600", "0640", "0644", { keep: "0600" }] as const)(
    "is in the file's directory, hidden, never wider than the final mode %p while it fills",
    async (mode) => {
      const f = file("f", "some content\n", mode);
      const { child, temp } = await started(f);
      const final = Number.parseInt(typeof mode === "string" ? mode : mode.keep, 8);
      expect(modeOf(temp) & ~final).toBe(0);
      child.stdin?.end(String(f.content).slice(3));
      expect(await ended(child)).toBe(0);
      expect(fs.readdirSync(dir)).toEqual(["f"]);
      expect(modeOf(f.path)).toBe(final);
    },
  );

  it("is removed when the write is stopped by a signal (the session ending)", async () => {
    const { child, temp } = await started(file("f", "some content\n", "0644"));
    process.kill(-(child.pid as number), "SIGTERM");
    await ended(child);
    expect(fs.existsSync(temp)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe("root's writes: only into directories root alone can change", () => {
  const root = (p: string, extra: Partial<RemoteFile> = {}): RemoteFile => ({
    path: p,
    content: "secret\n",
    writer: "root",
    mode: "0600",
    ...extra,
  });
  const write = (f: RemoteFile) => run("sh", writeFragment(f), f.content);

  it("refuses a directory under a world-writable one (/tmp), before writing a byte", () => {
    const r = write(root(path.join(dir, "f")));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`refusing to write ${path.join(dir, "f")} as root`);
    expect(r.stderr).toMatch(/\/tmp \(drwxrwxrwt root\)/);
    expect(fs.readdirSync(dir)).toEqual([]);
    // A check's compare refuses alike, in the same words.
    const spec = { ...root(path.join(dir, "f")), unlessSame: true };
    const compared = run("sh", compareFragment(spec), spec.content);
    expect([compared.code, compared.stderr]).toEqual([1, r.stderr]);
  });

  describe("in a root-only scratch directory", () => {
    let base: string;
    beforeEach(() => {
      base = fs.mkdtempSync(path.join(os.homedir(), ".remote-file-"));
    });
    afterEach(() => fs.rmSync(base, { recursive: true, force: true }));
    const rootOnly = asRoot && (fs.statSync(os.homedir()).mode & 0o022) === 0;

    (rootOnly ? it : it.skip)("creates the directory with its mode, sets it every time, writes the file", () => {
      const d = path.join(base, "records");
      const f = root(path.join(d, "grants.json"), { dir: { mode: "0700", exact: true } });
      expect(write(f).code).toBe(0);
      expect([modeOf(d), modeOf(f.path), fs.readFileSync(f.path, "utf8")]).toEqual([0o700, 0o600, "secret\n"]);
      fs.chmodSync(d, 0o755);
      expect(write(f).code).toBe(0);
      expect(modeOf(d)).toBe(0o700);
    });

    (rootOnly ? it : it.skip)("refuses a link in place of the directory; the directory it names is untouched", () => {
      const real = path.join(base, "real");
      fs.mkdirSync(real, { mode: 0o755 });
      fs.symlinkSync(real, path.join(base, "d"));
      for (const extra of [{}, { dir: { mode: "0700", exact: true } }]) {
        const r = write(root(path.join(base, "d", "f"), extra));
        expect([r.code, r.stderr]).toEqual([1, expect.stringContaining(`${path.join(base, "d")} (lrwxrwxrwx root)`)]);
        expect([fs.readdirSync(real), modeOf(real)]).toEqual([[], 0o755]);
      }
    });

    (rootOnly ? it : it.skip)("refuses a directory another user owns, or that group or others may write", () => {
      const d = path.join(base, "d");
      fs.mkdirSync(d, { mode: 0o755 });
      fs.chownSync(d, 65534, 65534);
      expect(write(root(path.join(d, "f"))).code).toBe(1);
      fs.chownSync(d, 0, 0);
      fs.chmodSync(d, 0o775);
      expect(write(root(path.join(d, "f"))).code).toBe(1);
      expect(fs.readdirSync(d)).toEqual([]);
      fs.chmodSync(d, 0o755);
      expect(write(root(path.join(d, "f"), { owner: "root:root" })).code).toBe(0);
    });
  });
});

describe("the spec and the exec", () => {
  it.each([
    [{ path: "relative/f" }, "not an absolute path"],
    [{ path: "/etc/../f" }, "not an absolute path"],
    [{ path: "/etc//f" }, "not an absolute path"],
    [{ path: "/f" }, "not an absolute path"],
    [{ path: "/etc/f\nx" }, "not printable ASCII"],
    [{ mode: "0444" }, "mode 0444 is not octal with u+rw"],
    [{ mode: { keep: "644 " } }, "mode 644  is not octal"],
    [{ dir: { mode: "0755" } }, "only root creates the directory"],
    [{ owner: "root:root" }, "owner is root's"],
    [{ writer: { user: "x; rm" } }, "is not a user name"],
  ] as [Partial<RemoteFile>, string][])("refuses %j before anything is sent", (change, why) => {
    const spec: RemoteFile = { path: "/etc/x/f", content: "", writer: { user: "postgres" }, mode: "0644", ...change };
    expect(() => writeFragment(spec)).toThrow(why);
  });

  it("runs as the writer with the content on stdin, marked as a change, named after the path", async () => {
    const path_ = "/etc/postgresql/15/main/pg hba.conf";
    const remote = new ScriptedRemote([
      {
        match: `mv -fT "$t" '${path_}'`,
        sudo: false,
        check: (c, o) => {
          expect(o).toMatchObject({ user: "postgres", stdin: "a\n", mutates: true, label: `writing ${path_}` });
          expect(c).not.toContain("a\n");
        },
      },
    ]);
    await writeRemoteFile(remote, { path: path_, content: "a\n", writer: { user: "postgres" }, mode: "0640" });
    expect(remote.done).toBe(true);
  });
});
