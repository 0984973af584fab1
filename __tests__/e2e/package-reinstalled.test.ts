// End-to-end (issue 32): a package vm-install installed that root purges and installs again is root's, on one
// sandbox VM with real dpkg and its real /var/log/dpkg.log. Three jobs install jq in turn: nobody touches it
// (absent takes jq and its libraries, the VM as before); root reinstalls it with apt-get install --reinstall
// (no removal in dpkg's log: still vm-install's, taken the same); root purges and installs it again (absent
// keeps jq, names it and forgets it, and keeps the libraries jq needs).
import type { Sandbox } from "../../dev/sandbox/index";
import { T, vmState } from "./support/absent-e2e";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";

const OURS = ["jq", "libjq1", "libonig5"];
const event = { packages: ["jq"], update: false };

describeE2E("a package root removed and installed again since vm-install installed it, on a sandbox VM", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T);
  let pristine: Record<string, string>;

  /** install-packages installs jq; the record holds its three packages, each with its transaction's time. */
  async function installJq(): Promise<void> {
    const run = await runInstaller(sb, "install-packages", event);
    expectSucceeded(run);
    expect(run.result.installed).toEqual(["jq"]);
    const record = JSON.parse(await root(sb, "cat /var/lib/vm-install/packages.json")).installers.packages;
    expect(record.packages).toEqual(OURS);
    const times = Object.values(record.installedAt as Record<string, string>);
    expect(times).toEqual([times[0], times[0], times[0]]);
    expect(times[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  }

  const absent = async () => {
    const run = await runInstaller(sb, "install-packages", { ...event, state: "absent" });
    expectSucceeded(run);
    return run.result;
  };

  test(
    "nobody touched it: absent removes jq and its libraries, the VM as before",
    async () => {
      await root(sb, "apt-get update -q", 300_000);
      pristine = await vmState(sb);
      expect(pristine.packages).not.toMatch(/^(jq|libjq1|libonig5) /m);
      await installJq();
      const result = await absent();
      expect(result).toMatchObject({ removed: OURS, kept: [], warnings: [] });
      expect(await vmState(sb)).toEqual(pristine);
    },
    T,
  );

  test(
    "root reinstalled it (apt-get install --reinstall: dpkg logs an upgrade, no removal): still vm-install's, removed",
    async () => {
      await installJq();
      await root(sb, "apt-get install -y -q --reinstall jq >/dev/null 2>&1", 300_000);
      expect(await root(sb, "tail -n 30 /var/log/dpkg.log | grep -c ' upgrade jq:'")).toBe("1\n");
      const result = await absent();
      expect(result).toMatchObject({ removed: OURS, kept: [], warnings: [] });
      expect(await vmState(sb)).toEqual(pristine);
    },
    T,
  );

  test(
    "root purged it and installed it again: absent keeps jq, names it and forgets it; its libraries stay for it",
    async () => {
      await installJq();
      await root(sb, "apt-get purge -y -q jq >/dev/null 2>&1 && apt-get install -y -q jq >/dev/null 2>&1", 300_000);
      const result = await absent();
      expect(result).toMatchObject({ removed: [], kept: ["libjq1", "libonig5"], changes: [] });
      expect(result.warnings).toEqual([
        expect.stringMatching(
          /^jq was removed and installed again since vm-install installed it: kept \(dpkg\.log: (remove|purge) at \d{4}-/,
        ),
        "kept libjq1: jq (not installed by this installer) depends on it",
        "kept libonig5: libjq1 (not installed by this installer) depends on it",
      ]);
      const record = JSON.parse(await root(sb, "cat /var/lib/vm-install/packages.json")).installers.packages;
      expect(record.packages).toEqual(["libjq1", "libonig5"]);
      expect(Object.keys(record.installedAt)).toEqual(["libjq1", "libonig5"]);
      expect(await root(sb, "dpkg-query -W -f='${db:Status-Abbrev}' jq libjq1 libonig5")).toBe("ii ii ii ");
    },
    T,
  );
});
