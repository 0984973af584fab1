// The fast-install bench's scripts (dev/bench/raw-sequences.ts, dev/bench/fast-install.ts) and how it merges its
// rotated groups (dev/bench/rounds.ts): the fsync modes change exactly the install line, the overlap fetches
// the next installer's .debs without apt's locks, and merged groups keep every round. No VM here.
import { execFileSync } from "node:child_process";
import { ADOPT_AT, fastScript, fsyncSides } from "../dev/bench/fast-install";
import { rawPackages, rawPostgres, rawTwoInstalls } from "../dev/bench/raw-sequences";
import { mergeOutcomes, type RoundsOutcome, stats } from "../dev/bench/rounds";

const sb = { hostAddress: "10.200.9.1" };
const installLine = (s: string) => s.split("\n").filter((l) => l.includes("apt-get install"));

describe("fast-install scripts", () => {
  it("the safe postgres and packages scripts are the installer baselines unchanged", () => {
    expect(fastScript("packages", "safe", sb)).toBe(rawPackages(["git", "curl", "jq", "htop", "unzip"]));
    expect(fastScript("postgres", "safe", sb)).toBe(
      rawPostgres({ db: "shop", user: "shop_app", password: "bench pw", remoteCidr: "10.200.9.1/32" }),
    );
    expect(fastScript("postgres", "safe", sb)).not.toMatch(/unsafe-io|eatmydata/);
  });

  it("unsafe-io adds dpkg's --force-unsafe-io and eatmydata wraps apt-get, on the install line only", () => {
    for (const work of ["postgres", "packages"] as const) {
      const safe = fastScript(work, "safe", sb);
      const unsafe = fastScript(work, "unsafe-io", sb);
      const eat = fastScript(work, "eatmydata", sb);
      expect(installLine(unsafe)).toEqual(
        installLine(safe).map((l) =>
          l.replace(" -o Dpkg::Options::=--force-confold", "$&" + " -o Dpkg::Options::=--force-unsafe-io"),
        ),
      );
      expect(installLine(eat)).toEqual(
        installLine(safe).map((l) => l.replace("apt-get install", "eatmydata apt-get install")),
      );
      const rest = (s: string) => s.split("\n").filter((l) => !l.includes("apt-get install"));
      expect(rest(unsafe)).toEqual(rest(safe));
      expect(rest(eat)).toEqual(rest(safe));
    }
  });

  it("names one side per work and mode, the safe one the baseline of the others", () => {
    expect(fsyncSides(["safe", "unsafe-io"]).map((s) => s.name)).toEqual([
      "postgres_safe",
      "postgres_unsafe-io",
      "packages_safe",
      "packages_unsafe-io",
    ]);
    expect(ADOPT_AT).toBe(0.85);
  });
});

describe("two installs with overlapping downloads", () => {
  const overlap = rawTwoInstalls(["jq"], ["postgresql"], { overlap: true });

  it("fetches the next .debs in the background before the first install and waits before the second", () => {
    const lines = overlap.split("\n");
    const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(at(/--print-uris postgresql/)).toBeLessThan(at(/apt-get install .* jq/));
    expect(at(/^\( while read .*\) &$/)).toBeLessThan(at(/apt-get install .* jq/));
    expect(at(/^wait$/)).toBeGreaterThan(at(/apt-get install .* jq/));
    expect(at(/^wait$/)).toBeLessThan(at(/apt-get install .* postgresql >/));
    // --download-only would wait on the lock-frontend the running install holds.
    expect(overlap).not.toMatch(/download-only/);
  });

  it("without overlap, is update and the two installs only", () => {
    const seq = rawTwoInstalls(["jq"], ["postgresql"], { overlap: false });
    expect(seq).not.toMatch(/print-uris|curl|^wait$/m);
    expect(installLine(seq)).toHaveLength(2);
  });

  it("parses print-uris lines into uri and file name", () => {
    const sed = overlap.split("\n").find((l) => l.includes("--print-uris"))!;
    const pipe = sed.slice(sed.indexOf("| sed") + 2, sed.indexOf(" > /tmp/uris"));
    const input =
      "'http://deb.example/pool/main/p/pg/postgresql-15_15.8-0%2bdeb12u1_amd64.deb' " +
      "postgresql-15_15.8-0+deb12u1_amd64.deb 17263176 SHA256:abc\n";
    expect(execFileSync("sh", ["-c", pipe], { input, encoding: "utf8" })).toBe(
      "http://deb.example/pool/main/p/pg/postgresql-15_15.8-0%2bdeb12u1_amd64.deb " +
        "postgresql-15_15.8-0+deb12u1_amd64.deb\n",
    );
  });
});

describe("mergeOutcomes", () => {
  const outcome = (side: string, rounds: number): RoundsOutcome => ({
    rounds,
    records: [{ round: 1, order: 1, side, ms: 10 }],
    stats: { [side]: stats([10]) },
  });

  it("keeps every group's records and stats", () => {
    const m = mergeOutcomes([outcome("a", 5), outcome("b", 5)]);
    expect(m.rounds).toBe(5);
    expect(m.records.map((r) => r.side)).toEqual(["a", "b"]);
    expect(Object.keys(m.stats)).toEqual(["a", "b"]);
  });

  it("refuses groups of different rounds and a side in two groups", () => {
    expect(() => mergeOutcomes([outcome("a", 5), outcome("b", 6)])).toThrow(/different rounds: 5, 6/);
    expect(() => mergeOutcomes([outcome("a", 5), outcome("a", 5)])).toThrow(/side a is in two groups/);
  });
});
