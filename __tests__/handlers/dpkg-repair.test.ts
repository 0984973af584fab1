import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compareDebianVersions } from "../../handlers/common/debian-version";
import { DPKG_HEALTH_LOOK, needsRepair, parseDpkgHealth, UNSETTLED_AWK } from "../../handlers/common/dpkg-health";
import {
  debFileName,
  describeDamage,
  describeRepair,
  failingPackages,
  manualCommand,
  planRepair,
  REPAIR_NO_DEB,
  repairScript,
  repairSources,
  wouldRemove,
} from "../../handlers/common/dpkg-repair";
import { probeOutput } from "./support/dpkg-probe";

const MESS =
  "The following packages are in a mess due to serious problems during\ninstallation.  They must be reinstalled for " +
  "them (and any packages\nthat depend on them) to function properly:\n perl-base            minimal Perl system\n";

/** Every state dpkg can leave a package in, as the probe lists them (name, arch, Status, Version). */
const EVERY_STATE = [
  "perl-base\tamd64\tinstall reinstreq unpacked\t5.36.0-7+deb12u3", // an upgrade cut mid-unpack: old version on record
  "libllvm14\tamd64\tinstall reinstreq half-installed\t1:14.0.6-12", // a fresh install cut mid-unpack
  "sysstat\tamd64\tinstall ok half-installed\t12.6.1-1", // a removal or unpack cut short, no flag
  "postgresql-15\tamd64\tinstall ok unpacked\t15.14-0+deb12u1",
  "postgresql-common\tall\tinstall ok half-configured\t248+deb12u2",
  "man-db\tamd64\tinstall ok triggers-pending\t2.11.2-2",
  "libc-bin\tamd64\tinstall ok triggers-awaited\t2.36-9+deb12u14",
];

describe("the dpkg health probe", () => {
  it(
    "is one unprivileged command that reads dpkg's files, not only dpkg-query (which needs the lock while a " +
      "journal is pending)",
    () => {
      expect(DPKG_HEALTH_LOOK.script).toContain('/var/lib/dpkg/status "$@"');
      expect(DPKG_HEALTH_LOOK.script).not.toMatch(/sudo/);
    },
  );

  it("its awk reads the status file and the journal, the journal's entry for a package winning", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dpkg-probe-"));
    const status = path.join(dir, "status");
    const journal = path.join(dir, "0000");
    fs.writeFileSync(
      status,
      "Package: perl-base\nStatus: install ok installed\nArchitecture: amd64\nVersion: 5.36.0-7+deb12u3\n\n" +
        "Package: jq\nStatus: install ok half-configured\nArchitecture: amd64\nVersion: 1.6-2.1\n\n" +
        "Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1\n",
    );
    // dpkg writes one stanza per journal file, without a blank line after it.
    fs.writeFileSync(
      journal,
      "Package: perl-base\nStatus: install reinstreq half-installed\nArchitecture: amd64\nVersion: 5.36.0-7+deb12u3\n",
    );
    const out = execFileSync("awk", [UNSETTLED_AWK, status, journal], { encoding: "utf8" });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(out.trim().split("\n").sort()).toEqual([
      "jq\tamd64\tinstall ok half-configured\t1.6-2.1",
      "perl-base\tamd64\tinstall reinstreq half-installed\t5.36.0-7+deb12u3",
    ]);
  });

  it("a healthy dpkg, also in the short form older doubles answer: nothing to repair", () => {
    for (const out of [probeOutput({}), probeOutput({ cache: ["jq_1.6-2.1_amd64.deb"] })]) {
      const h = parseDpkgHealth(out);
      expect(needsRepair(h)).toBe(false);
      expect(h.packages).toEqual([]);
    }
  });

  it("reads every section: journal, audit, packages in between, running maintainer scripts, cached .debs", () => {
    const h = parseDpkgHealth(
      probeOutput({
        updates: "0000\n0001",
        audit: MESS,
        packages: EVERY_STATE,
        scripts: ["4711 /bin/sh /var/lib/dpkg/info/postgresql-common.postinst configure"],
        cache: ["perl-base_5.36.0-7+deb12u4_amd64.deb"],
      }),
    );
    expect(h.interrupted).toBe(true);
    expect(h.audit).toMatch(/^The following packages are in a mess/);
    expect(h.packages.map((p) => `${p.name} ${p.flag} ${p.status}`)).toEqual([
      "perl-base reinstreq unpacked",
      "libllvm14 reinstreq half-installed",
      "sysstat ok half-installed",
      "postgresql-15 ok unpacked",
      "postgresql-common ok half-configured",
      "man-db ok triggers-pending",
      "libc-bin ok triggers-awaited",
    ]);
    expect(h.packages[1]).toEqual({
      name: "libllvm14",
      arch: "amd64",
      want: "install",
      flag: "reinstreq",
      status: "half-installed",
      version: "1:14.0.6-12",
    });
    expect(h.scripts).toEqual(["4711 /bin/sh /var/lib/dpkg/info/postgresql-common.postinst configure"]);
    expect(h.cached).toEqual(["perl-base_5.36.0-7+deb12u4_amd64.deb"]);
    expect(needsRepair(h)).toBe(true);
  });

  it("dpkg --audit refused its lock (Debian 12, unprivileged): no finding, the status files decide", () => {
    const denied =
      "dpkg: error: unable to check lock file for dpkg database directory /var/lib/dpkg: Permission denied";
    expect(needsRepair(parseDpkgHealth(probeOutput({ audit: denied })))).toBe(false);
    const h = parseDpkgHealth(
      probeOutput({ audit: denied, packages: ["jq\tamd64\tinstall ok half-configured\t1.6-2.1"] }),
    );
    expect(needsRepair(h)).toBe(true);
    expect(describeDamage(h)).toBe("half-done packages: jq (half-configured)");
  });

  it("reads the journal only when there is one (an unexpanded glob would stop awk)", () => {
    expect(DPKG_HEALTH_LOOK.script).toContain('set -- /var/lib/dpkg/updates/[0-9]*; [ -e "$1" ] || set --;');
  });

  it("a journal alone, or an audit alone, needs repair", () => {
    expect(needsRepair(parseDpkgHealth(probeOutput({ updates: "0000" })))).toBe(true);
    expect(needsRepair(parseDpkgHealth(probeOutput({ audit: MESS })))).toBe(true);
  });
});

describe("Debian version order (dpkg's)", () => {
  it.each([
    ["1.0", "1.0", 0],
    ["1.0", "1.1", -1],
    ["1.0~rc1", "1.0", -1],
    ["1:1.0", "2.0", 1],
    ["5.36.0-7+deb12u3", "5.36.0-7+deb12u4", -1],
    ["1.10", "1.9", 1],
    ["1.0-1", "1.0-1.1", -1],
    ["2.36-9+deb12u14", "2.36-9+deb12u9", 1],
    ["1.0a", "1.0+", -1],
  ])("%s vs %s", (a, b, sign) => {
    expect(Math.sign(compareDebianVersions(a, b))).toBe(sign);
    expect(Math.sign(compareDebianVersions(b, a)) * -1 || 0).toBe(sign);
  });
});

describe("the repair plan", () => {
  const health = (cache: string[] = [], scripts: string[] = []) =>
    parseDpkgHealth(probeOutput({ packages: EVERY_STATE, cache, scripts }));

  it(
    "reinstalls exactly what only a whole .deb mends (reinst-required, half-installed); dpkg --configure -a " +
      "finishes the rest",
    () => {
      const plan = planRepair(health());
      expect(plan.reinstall.map((r) => r.name)).toEqual(["perl-base", "libllvm14", "sysstat"]);
      expect(plan.configure).toEqual(["postgresql-15", "postgresql-common", "man-db", "libc-bin"]);
    },
  );

  it(
    "at the version on record: from the archive cache when there, else from the mirror, else the cached .deb the " +
      "interrupted run was unpacking",
    () => {
      const plan = planRepair(
        health([
          "libllvm14_1%3a14.0.6-12_amd64.deb",
          "perl-base_5.36.0-7+deb12u4_amd64.deb",
          "perl-base_5.36.0-7+deb12u2_amd64.deb",
          "perl-base-extra_1_amd64.deb",
        ]),
      );
      expect(plan.reinstall).toEqual([
        {
          name: "perl-base",
          arch: "amd64",
          version: "5.36.0-7+deb12u3",
          download: "perl-base:amd64=5.36.0-7+deb12u3",
          fallback: "perl-base_5.36.0-7+deb12u4_amd64.deb",
        },
        { name: "libllvm14", arch: "amd64", version: "1:14.0.6-12", cached: "libllvm14_1%3a14.0.6-12_amd64.deb" },
        { name: "sysstat", arch: "amd64", version: "12.6.1-1", download: "sysstat:amd64=12.6.1-1" },
      ]);
    },
  );

  it("names .debs as apt does (the epoch's colon encoded); arch all has no :arch in the spec", () => {
    expect(debFileName("libllvm14", "1:14.0.6-12", "amd64")).toBe("libllvm14_1%3a14.0.6-12_amd64.deb");
    const h = parseDpkgHealth(
      probeOutput({ packages: ["postgresql-common\tall\tinstall reinstreq half-installed\t248+deb12u2"] }),
    );
    expect(planRepair(h).reinstall[0].download).toBe("postgresql-common=248+deb12u2");
  });

  it(
    "the script waits for left-over maintainer scripts, unpacks the .debs, configures, then apt-get -f install " +
      "never removing anything",
    () => {
      const script = repairScript(planRepair(health(["libllvm14_1%3a14.0.6-12_amd64.deb"])), {
        lockTimeoutSec: 30,
        waitSec: 30,
      });
      const order = [
        "pgrep -f",
        "apt-get download",
        "--unpack $debs",
        "--configure -a",
        "apt-get -f install --no-remove",
        "--triggers-only -a",
      ].map((s) => script.indexOf(s));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(script).toContain(`f="$A/libllvm14_1%3a14.0.6-12_amd64.deb"`);
      expect(script).toContain("apt-get download -q -o DPkg::Lock::Timeout=30 perl-base:amd64=5.36.0-7+deb12u3 ");
      expect(script).toContain(`exit ${REPAIR_NO_DEB}`);
      expect(script).toContain("DPkg::Lock::Timeout=30");
      expect(script).not.toMatch(/apt-get (-f install|install)(?! --no-remove)[^\n]*-y/);
      expect(script).not.toMatch(/apt-get (remove|purge|autoremove)|dpkg -[rP]\b|--force-remove/);
    },
  );

  it("nothing to reinstall: no download, no unpack", () => {
    const h = parseDpkgHealth(
      probeOutput({ packages: ["postgresql-15\tamd64\tinstall ok unpacked\t15.14-0+deb12u1"] }),
    );
    const script = repairScript(planRepair(h), { lockTimeoutSec: 30, waitSec: 30 });
    expect(script).not.toContain("--unpack");
    expect(script).not.toContain("apt-get download");
  });

  it("refuses a name, version or file that is not one (they go into a root script)", () => {
    const bad = parseDpkgHealth(probeOutput({ packages: ["x;rm\tamd64\tinstall reinstreq half-installed\t1"] }));
    expect(() => repairScript(planRepair(bad), { lockTimeoutSec: 30, waitSec: 30 })).toThrow(/is not a package name/);
  });
});

describe("the repair in words", () => {
  it("what was found and what was done, with where each .deb came from", () => {
    const h = parseDpkgHealth(
      probeOutput({
        updates: "0000",
        packages: EVERY_STATE.slice(0, 1).concat(EVERY_STATE.slice(3, 4)),
        scripts: ["1 /var/lib/dpkg/info/x.postinst"],
      }),
    );
    expect(describeDamage(h)).toBe(
      "an interrupted dpkg run; to reinstall: perl-base; half-done packages: postgresql-15 (unpacked); maintainer " +
        "scripts left running: 1",
    );
    const plan = planRepair(h);
    const out = "vm-install-repair: reinstall perl-base from the mirror\n";
    expect(describeRepair(plan, repairSources(out))).toBe(
      "waited for the maintainer scripts left running, then reinstalled perl-base 5.36.0-7+deb12u3 (from the " +
        "mirror), then dpkg --configure -a and apt-get -f install --no-remove",
    );
  });

  it("without a package list (an older probe's answer): the packages dpkg --audit names", () => {
    expect(
      describeDamage(
        parseDpkgHealth(probeOutput({ updates: "0001", audit: "half configured:\n gcc-12    GNU C compiler" })),
      ),
    ).toBe("an interrupted dpkg run; half-done packages: gcc-12");
  });

  it("the packages dpkg and apt name as failing", () => {
    const out = [
      "dpkg: error processing package postgresql-common (--configure):",
      " installed postgresql-common package post-installation script subprocess returned error exit status 1",
      "dpkg: error processing archive /var/cache/apt/archives/sysstat_12.6.1-1_amd64.deb (--unpack):",
      "Errors were encountered while processing:",
      " postgresql-common",
      " /var/cache/apt/archives/sysstat_12.6.1-1_amd64.deb",
      "vm-install-repair: no-deb perl-base",
    ].join("\n");
    expect(failingPackages(out)).toEqual(["postgresql-common", "sysstat", "perl-base"]);
  });

  it("what apt-get -f install would remove", () => {
    expect(
      wouldRemove(
        "NOTE: This is only a simulation!\nRemv postgresql [15+248] \nRemv libpq5:amd64 [15.14]\nInst x (1 " +
          "Debian:12)\n",
      ),
    ).toEqual(["postgresql", "libpq5"]);
  });

  it("the one command a person runs: a reinstall at the recorded version, else configuring what failed", () => {
    const h = parseDpkgHealth(probeOutput({ packages: EVERY_STATE.slice(0, 1) }));
    expect(manualCommand(h)).toBe("sudo apt-get install --reinstall perl-base=5.36.0-7+deb12u3");
    const cfg = parseDpkgHealth(probeOutput({ packages: EVERY_STATE.slice(4, 5) }));
    expect(manualCommand(cfg, ["postgresql-common"])).toBe("sudo dpkg --configure postgresql-common");
    expect(manualCommand(parseDpkgHealth(probeOutput({ updates: "0000" })))).toBe("sudo dpkg --configure -a");
  });
});
