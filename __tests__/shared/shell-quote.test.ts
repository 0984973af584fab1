import { execFileSync } from "node:child_process";
import { command, quote } from "../../lib/shared/shell-quote";

/** What /bin/sh makes of `line`: its arguments, one per line. */
function shellWords(line: string): string[] {
  const out = execFileSync("sh", ["-c", `for a in ${line}; do printf '%s\\000' "$a"; done`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}

describe("quote", () => {
  it("leaves plain words bare so logged commands stay readable", () => {
    expect(quote("git")).toBe("git");
    expect(quote("curl=7.88.1-10+deb12u5")).toBe("curl=7.88.1-10+deb12u5");
    expect(quote("DPkg::Lock::Timeout=30")).toBe("DPkg::Lock::Timeout=30");
  });

  it("single-quotes everything else, writing ' as '\\''", () => {
    expect(quote("")).toBe("''");
    expect(quote("a b")).toBe("'a b'");
    expect(quote("it's")).toBe("'it'\\''s'");
    expect(quote("git;touch /tmp/pwned")).toBe("'git;touch /tmp/pwned'");
  });

  it.each([
    "git;touch /tmp/pwned",
    "$(id)",
    "`id`",
    "a'b\"c",
    "'; rm -rf / #",
    "back\\slash",
    "new\nline",
    "*",
    "${HOME}",
    "",
  ])("survives a real sh unchanged: %j", (nasty) => {
    expect(shellWords(quote(nasty))).toEqual([nasty]);
  });

  it("command() quotes each argument", () => {
    expect(command("apt-cache", "policy", "git", "x y")).toBe("apt-cache policy git 'x y'");
    expect(shellWords(command("a b", "c'd", "$e"))).toEqual(["a b", "c'd", "$e"]);
  });
});
