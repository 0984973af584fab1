import { matrix } from "../bin/faults";

const meta = { commit: "abc123", date: "2026-12-03", command: "npm run faults" };

describe("npm run faults: the printed matrix", () => {
  it("single cases in one table, each many-moments install in a table of its own with its count and slowest moment", () => {
    const text = matrix(
      [
        { case: "sshd restarted mid-job", outcome: "job completed", recoverMs: 10_400, ok: true },
        {
          case: "postgresql install: dpkg killed in the first unpack",
          outcome: "left perl-base=iHR; job completed",
          recoverMs: 9_000,
          ok: true,
        },
        {
          case: "postgresql install: apt-get killed while a .deb downloads",
          outcome: "FAILED: x | y",
          recoverMs: 21_000,
          ok: false,
        },
        { case: "local package: its postinst killed mid-run", outcome: "job completed", recoverMs: 4_500, ok: true },
      ],
      meta,
    );
    const lines = text.split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "| case | result | outcome | time to recover |",
      "| --- | --- | --- | --- |",
      "| sshd restarted mid-job | recovered | job completed | 10.4 s |",
    ]);
    expect(text).toMatch(
      /\*\*postgresql install\*\*: dpkg and apt-get killed at moments of one `postgresql` install .*; 1 of 2 moments recovered, the slowest in 21\.0 s:/,
    );
    expect(lines).toContain(
      "| dpkg killed in the first unpack | recovered | left perl-base=iHR; job completed | 9.0 s |",
    );
    expect(lines).toContain("| apt-get killed while a .deb downloads | **FAILED** | FAILED: x \\| y | 21.0 s |");
    expect(text).toMatch(/\*\*local package\*\*: .*; 1 of 1 moments recovered/);
    expect(lines[lines.length - 1]).toMatch(
      /^3 of 4 cases recovered with nothing lost and no manual step; `npm run faults`, commit abc123, 2026-12-03, \d+ cores\.$/,
    );
  });

  it("without many-moments records: the one table, as before", () => {
    const text = matrix(
      [{ case: "sshd restarted mid-job", outcome: "job completed", recoverMs: 1000, ok: true }],
      meta,
    );
    expect(text).not.toContain("**");
    expect(text.split("\n")).toHaveLength(5);
  });
});
