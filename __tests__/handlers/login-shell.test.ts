// sshd runs every command line with the login user's shell (`$SHELL -c LINE`). That shell may be fish,
// csh or tcsh, which read quotes, backslashes, `!` and newlines otherwise than sh does: fish turns `\\`
// into `\` and `\'` into `'` inside single quotes, csh refuses a newline inside them and expands `!`
// history there. So the line sent is always `[sudo -n [-u U]] sh -c ARG`, ARG one single-quoted word
// every such shell reads the same, and ARG carries the command: as it is when it is only such
// characters, else base64-encoded, decoded and eval'ed by sh itself.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { commandLine, ExecRemote, type RawExec } from "../../handlers/common/exec";
import { SecretScrubber } from "../../lib/shared/secrets";

/** Commands of every shape the installers send, the awkward ones above all. */
const COMMANDS = [
  "cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release",
  "dpkg-query -W -f='${Package}\\t${Status}\\t${Version}\\n' jq git",
  "printf '%s\\n' 'it'\\''s' \"a\\\\b\" 'c\\' 'd\\\\'",
  "echo one\necho two\nif [ 1 = 1 ]; then echo three; fi",
  "echo 'hi!' \"bang!\" && echo $((1+2))",
  'x=$(echo \'a"b\'); echo "$x" `echo tick`',
  "echo 'Grüße 日本語'",
  "echo '{\"a\": [1, 2]}' | tr -d ' '",
  'for f in /etc/host*; do echo "${f##*/}"; done | head -1',
  "echo ~ $HOME | wc -w",
];

/** What sh itself prints for `command`: the reference the line must reproduce. */
const direct = (command: string, env: NodeJS.ProcessEnv) =>
  execFileSync("/bin/sh", ["-c", command], { env, encoding: "utf8" });

/**
 * One word that sh, bash, dash, zsh, fish, csh and tcsh all read the same: a bare safe word, or
 * single-quoted runs of printable ASCII without `!` in which a backslash is followed by neither a
 * backslash nor the closing quote (fish's only escapes there), joined by `\'`.
 */
const PORTABLE_ARG = /^(?:'(?:[ "-&(-[\]-~]|\\[ "-&(-[\]-~])*'|\\')+$|^[A-Za-z0-9_@%+=:,./-]+$/;

describe("commandLine: what the login shell is given", () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "login-shell-"));
    // A fake sudo: drops -n and -u USER, runs the rest (it is what the real one does for root).
    fs.writeFileSync(
      path.join(dir, "sudo"),
      '#!/bin/sh\n[ "$1" = "-n" ] && shift\n[ "$1" = "-u" ] && shift 2\nexec "$@"\n',
      { mode: 0o755 },
    );
    env = { PATH: `${dir}:${process.env.PATH}`, HOME: "/root", LC_ALL: "C.UTF-8" };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each(COMMANDS.map((c) => [c]))(
    "%j: sh -c of one portable word, and sh runs exactly the command, with sudo, -u and env too",
    (command) => {
      const variants: { sudo?: boolean; user?: string; env?: Record<string, string> }[] = [
        {},
        { sudo: true },
        { user: "postgres" },
        { env: { LC_ALL: "C", X: "it's \\ ok!" } },
        { sudo: true, env: { DEBIAN_FRONTEND: "noninteractive" } },
      ];
      for (const opts of variants) {
        const line = commandLine(command, opts);
        const m = /^(sudo -n (?:-u [a-z_][a-z0-9_-]* )?)?sh -c (.*)$/s.exec(line);
        expect({ opts, line: m ? "sh -c ..." : line }).toEqual({ opts, line: "sh -c ..." });
        expect({ opts, arg: PORTABLE_ARG.test(m![2]) ? "portable" : m![2] }).toEqual({ opts, arg: "portable" });
        const exports = Object.entries(opts.env ?? {})
          .map(([k, v]) => `export ${k}='${v.replace(/'/g, "'\\''")}'; `)
          .join("");
        // The login shell here is sh: what matters is that the line holds nothing any other shell reads otherwise.
        expect(execFileSync("/bin/sh", ["-c", line], { env, encoding: "utf8" })).toBe(direct(exports + command, env));
      }
    },
  );

  it("a plain command stays readable on the wire (ps, sshd's log): only the sh -c around it", () => {
    expect(commandLine("cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release")).toBe(
      "sh -c 'cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release'",
    );
    expect(commandLine("true")).toBe("sh -c true");
    expect(commandLine("apt-get update && touch /x", { sudo: true })).toBe(
      "sudo -n sh -c 'apt-get update && touch /x'",
    );
    expect(commandLine("psql -f -", { user: "postgres" })).toBe("sudo -n -u postgres sh -c 'psql -f -'");
    expect(() => commandLine("x", { user: "root; id" })).toThrow(/commandLine: "root; id" is not a Unix user name/);
  });

  it("stdin still reaches the command when the command is carried encoded", () => {
    const line = commandLine("cat\necho done");
    expect(line).toMatch(/base64 -d/);
    expect(execFileSync("/bin/sh", ["-c", line], { env, input: "data\n", encoding: "utf8" })).toBe("data\ndone\n");
  });

  it("ExecRemote sends commandLine's line, unprivileged commands included", async () => {
    const sent: string[] = [];
    const exec: RawExec = async (line) => {
      sent.push(line);
      return { code: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
    };
    const remote = new ExecRemote(exec, {
      target: "ubuntu@192.0.2.10:22",
      user: "ubuntu",
      secrets: new SecretScrubber(),
    });
    await remote.run("id -un");
    await remote.run("locale", { env: { LC_ALL: "C" } });
    expect(sent).toEqual(["sh -c 'id -un'", "sh -c 'export LC_ALL=C; locale'"]);
  });
});
