// install-postgres writes the drop-in and pg_hba.conf and has the server check them in one exec (issue 30):
// each file is the next bytes of stdin. Run in sh on a scratch directory: every file gets exactly its bytes
// (multibyte text, no final newline, empty), in order; a stdin cut short fails and leaves the file as it was.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type FileWrite, writeFromStdin } from "../../handlers/install-postgres/configuration";

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "config-write-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const sh = (files: FileWrite[], stdin: string) =>
  execFileSync("sh", ["-c", `${files.map(writeFromStdin).join(" && ")} && echo done`], { input: stdin }).toString();

describe("the configuration exec's file writes", () => {
  const contents = [
    "listen_addresses = '*'\n",
    "# ünïcödé — comments\nhost all all 10.0.0.0/8 scram-sha-256",
    "",
    "x".repeat(70_000),
  ];

  it.each(contents.map((c, i) => [i, c]))("file %i before another: each gets exactly its bytes", (_i, content) => {
    const files = [
      { path: path.join(dir, "a.conf"), content, mode: "0644" },
      { path: path.join(dir, "pg_hba.conf"), content: "after\n", mode: "0640" },
    ];
    expect(sh(files, files.map((f) => f.content).join(""))).toBe("done\n");
    expect(fs.readFileSync(files[0].path, "utf8")).toBe(content);
    expect(fs.readFileSync(files[1].path, "utf8")).toBe("after\n");
    expect(fs.statSync(files[0].path).mode & 0o777).toBe(0o644);
    expect(fs.statSync(files[1].path).mode & 0o777).toBe(0o640);
  });

  it("keeps an existing file's mode", () => {
    const f = { path: path.join(dir, "pg_hba.conf"), content: "new\n", mode: "0640" };
    fs.writeFileSync(f.path, "old\n", { mode: 0o600 });
    sh([f], f.content);
    expect(fs.readFileSync(f.path, "utf8")).toBe("new\n");
    expect(fs.statSync(f.path).mode & 0o777).toBe(0o600);
  });

  it("a stdin cut short fails, leaves the file as it was and no temporary file behind", () => {
    const f = { path: path.join(dir, "pg_hba.conf"), content: "the whole file\n", mode: "0640" };
    fs.writeFileSync(f.path, "old\n");
    expect(() => sh([f], "the whole")).toThrow();
    expect(fs.readFileSync(f.path, "utf8")).toBe("old\n");
    expect(fs.readdirSync(dir)).toEqual(["pg_hba.conf"]);
  });
});
