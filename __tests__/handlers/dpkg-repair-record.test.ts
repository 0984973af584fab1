// What a dpkg repair installs in a job is recorded as that job's, through the same mechanism as its installs
// (apt-transaction.ts): the repair's own dpkg runs, apt-get -f install's included, carry the hooks, and the
// record is read after it whatever its outcome. A package left half-done before the repair is not the job's.
import { Apt, DEFAULT_APT } from "../../handlers/common/apt";
import {
  TRANSACTION_DPKG_OPTIONS,
  TRANSACTION_LOOK,
  TRANSACTION_OPTIONS,
  TRANSACTION_PROLOGUE,
} from "../../handlers/common/apt-transaction";
import { DPKG_HEALTH_LOOK } from "../../handlers/common/dpkg-health";
import { repairScript } from "../../handlers/common/dpkg-repair";
import { recordInstalls } from "../../handlers/common/package-inventory";
import { quote } from "../../lib/shared/shell-quote";
import { probeOutput } from "./support/dpkg-probe";
import { ScriptedRemote } from "./support/scripted-remote";

const noSleep = { sleep: async () => undefined };
/** The admin's `dpkg --unpack jq.deb` without its libraries: jq unpacked, libjq1 and libonig5 missing. */
const ADMIN_UNPACKED = probeOutput({
  audit: " jq    lightweight and flexible command-line JSON processor\n",
  packages: ["jq\tamd64\tinstall ok unpacked\t1.6-2.1"],
});
/** The repair's dpkg runs as their hooks wrote them: jq there (unpacked) before, the libraries apt-get brought. */
const REPAIR_RECORD = {
  "apt_tx.before.packages": "ii \tcurl\niU \tjq\n",
  "apt_tx.status":
    "status: libonig5:amd64: unpacked\nstatus: libjq1:amd64: unpacked\nstatus: libonig5:amd64: installed\n" +
    "status: libjq1:amd64: installed\nstatus: jq:amd64: installed\n",
};
const repairStep = (extra: { code?: number; stderr?: string } = {}) => ({
  match: /^A=\/var\/cache\/apt\/archives; debs=""\n/,
  sudo: true,
  ...extra,
  check: (c: string) => {
    for (const hook of TRANSACTION_DPKG_OPTIONS) {
      expect(c).toContain(`dpkg --force-confdef --force-confold ${TRANSACTION_DPKG_OPTIONS.map(quote).join(" ")}`);
      expect(c).toContain(quote(hook));
    }
    expect(c).toContain(`--force-confold ${TRANSACTION_OPTIONS.map(quote).join(" ")} || exit $?`);
  },
});

describe("a dpkg repair in a job that records its installs", () => {
  it(
    "runs in a transaction of its own: what apt-get -f install brought is recorded under the installer, the " +
      "package half-done before it is not",
    async () => {
      const remote = new ScriptedRemote([
        { match: DPKG_HEALTH_LOOK.script, stdout: ADMIN_UNPACKED },
        repairStep(),
        { match: TRANSACTION_LOOK.script, sudo: true, facts: REPAIR_RECORD },
        { match: DPKG_HEALTH_LOOK.script, stdout: probeOutput({}) },
        { match: "apt-get install", sudo: true },
      ]);
      const apt = recordInstalls(new Apt(remote, DEFAULT_APT, noSleep), "packages");
      await apt.install(["curl"]);
      expect(remote.done).toBe(true);
      expect(remote.sent.some((c) => c.startsWith(`${TRANSACTION_PROLOGUE} && {\nA=`))).toBe(true);
      expect(JSON.parse(remote.packageInventory ?? "{}").installers).toEqual({
        packages: { packages: ["libjq1", "libonig5"], groups: [], users: [], files: [] },
      });
      expect(apt.repairs).toHaveLength(1);
    },
  );

  it("a repair that fails still records what it installed before failing; its error stands", async () => {
    const remote = new ScriptedRemote([
      { match: DPKG_HEALTH_LOOK.script, stdout: ADMIN_UNPACKED },
      repairStep({ code: 100, stderr: "dpkg: error processing package jq (--configure):\n" }),
      { match: TRANSACTION_LOOK.script, sudo: true, facts: REPAIR_RECORD },
      { match: DPKG_HEALTH_LOOK.script, stdout: ADMIN_UNPACKED },
    ]);
    const apt = recordInstalls(new Apt(remote, DEFAULT_APT, noSleep), "packages");
    await expect(apt.install(["curl"])).rejects.toThrow(/^dpkg could not be repaired on .* \(exit 100\): jq\./);
    expect(remote.done).toBe(true);
    expect(JSON.parse(remote.packageInventory ?? "{}").installers.packages.packages).toEqual(["libjq1", "libonig5"]);
  });

  it("a job that keeps no record (no recorder): the repair script carries no hooks", () => {
    const plan = { reinstall: [], configure: ["jq"], scripts: [] };
    const plain = repairScript(plan, { lockTimeoutSec: 30, waitSec: 30 });
    expect(plain).not.toContain("--status-logger");
    expect(repairScript(plan, { lockTimeoutSec: 30, waitSec: 30, record: true })).toContain(
      `dpkg ${TRANSACTION_DPKG_OPTIONS.map(quote).join(" ")} --triggers-only -a`,
    );
  });
});
