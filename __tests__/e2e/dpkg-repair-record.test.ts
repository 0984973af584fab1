// End-to-end: what a job's dpkg repair installs is recorded as that job's, from the repair's own dpkg runs
// (issue 32 build item 1), on one sandbox VM: the admin left jq unpacked without its libraries (dpkg -i of
// its .deb alone); an install-packages job repairs dpkg first, its apt-get -f install bringing the libraries.
// Those are recorded, jq (the admin's) is not; state absent keeps the libraries while the admin's jq needs them.
import type { Sandbox } from "../../dev/sandbox/index";
import { T, vmState } from "./support/absent-e2e";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";

const installedLines = (text: string) => new Set(text.split("\n").filter((l) => / ii $/.test(l)));

describeE2E("a dpkg repair in an install-packages job on a sandbox VM: what it installs is the job's record", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T);

  test(
    "the libraries apt-get -f install brings for the admin's half-installed jq are recorded with the job's own " +
      "package; jq is not; absent takes pv and keeps what jq needs",
    async () => {
      await root(sb, "apt-get update -q", 300_000);
      const pristine = await vmState(sb);
      expect(pristine.packages).not.toMatch(/^(jq|libjq1|libonig5|pv) /m);
      await root(sb, "cd /tmp && apt-get download -q jq && { dpkg -i /tmp/jq_*.deb > /tmp/dpkg-i.log 2>&1; true; }");
      expect(await root(sb, "dpkg-query -W -f='${db:Status-Abbrev}' jq")).toBe("iU ");

      const run = await runInstaller(sb, "install-packages", { packages: ["pv"], update: false });
      expectSucceeded(run);
      expect(run.result.changes[0]).toMatch(/^repaired dpkg \(.*jq.*\): dpkg --configure -a and apt-get -f install/);
      const record = JSON.parse(await root(sb, "cat /var/lib/vm-install/packages.json")).installers.packages;
      expect(record.packages).toEqual(["libjq1", "libonig5", "pv"]);

      const absent = await runInstaller(sb, "install-packages", { packages: ["pv"], state: "absent" });
      expectSucceeded(absent);
      expect(absent.result.removed).toEqual(["pv"]);
      expect(absent.result.kept).toEqual(["libjq1", "libonig5"]);
      // Pristine plus the admin's doing: their jq, configured now, with what it needs.
      const after = installedLines((await vmState(sb)).packages);
      const before = installedLines(pristine.packages);
      expect([...before].filter((l) => !after.has(l))).toEqual([]);
      expect([...after].filter((l) => !before.has(l)).sort()).toEqual(["jq ii ", "libjq1 ii ", "libonig5 ii "]);
      expect(await root(sb, "dpkg --audit; echo rc=$?")).toBe("rc=0\n");
    },
    T,
  );
});
