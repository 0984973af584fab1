// What the state-absent end-to-end suites share: the VM's state as absent must give it back, absent run as a
// check, for real and again, and the checks on what is left.
import * as fs from "node:fs";
import type { CdktfRun } from "../../../dev/demo/project";
import type { Sandbox } from "../../../dev/sandbox/index";
import { filesUnder } from "../../support/synth";
import { expectSucceeded, type InstallerRun, root, runInstaller, vmFingerprint } from "./e2e";

export const T = 600_000;

/** What a record file still records: `version`, `about` and empty lists and objects left out ({} for none). */
function stillRecorded(text: string): unknown {
  const prune = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.length ? v : undefined;
    if (typeof v !== "object" || v === null) return v;
    const kept = Object.entries(v)
      .filter(([k]) => k !== "version" && k !== "about")
      .map(([k, x]) => [k, prune(x)] as const)
      .filter(([, x]) => x !== undefined);
    return kept.length ? Object.fromEntries(kept) : undefined;
  };
  return text.trim() ? (prune(JSON.parse(text)) ?? {}) : {};
}

/**
 * What absent must give back: every package by name and dpkg state (an install may upgrade a package that
 * was there, when a new one needs a newer version of it: absent does not downgrade), apt's sources and
 * keys with their content, groups with their members, users, PostgreSQL's trees (paths and owners),
 * daemon.json (log rotation is on by default), and what vm-install's two record files still record.
 */
export async function vmState(sb: Sandbox): Promise<Record<string, string>> {
  const sh = (command: string) => root(sb, command, 60_000);
  const records = async (file: string) =>
    JSON.stringify(stillRecorded(await sh(`cat /var/lib/vm-install/${file} 2>/dev/null; true`)));
  return {
    packages: await sh("dpkg-query -W -f='${Package} ${db:Status-Abbrev}\\n' | sort"),
    apt: await sh(
      "find /etc/apt/sources.list.d /etc/apt/keyrings -mindepth 1 | sort | " +
        'while read -r f; do stat -c \'%n %a %U %s\' "$f"; [ -f "$f" ] && sha256sum "$f"; done; true',
    ),
    groups: await sh("getent group | sort"),
    users: await sh("getent passwd | cut -d: -f1 | sort"),
    postgres: await sh(
      "find /etc/postgresql /etc/postgresql-common /var/lib/postgresql -printf '%p %u:%g\\n' 2>/dev/null | sort; true",
    ),
    daemonJson: await sh("cat /etc/docker/daemon.json 2>/dev/null || echo '(none)'"),
    grants: await records("grants.json"),
    installed: await records("packages.json"),
  };
}

export async function expectAuditClean(sb: Sandbox): Promise<void> {
  expect(await root(sb, "dpkg --audit; echo rc=$?")).toBe("rc=0\n");
}

/** A cdktf run that succeeded (its output's tail when it did not). */
export function expectRan(run: CdktfRun): void {
  expect({ code: run.code, tail: run.code ? run.output.slice(-3000) : "" }).toEqual({ code: 0, tail: "" });
}

/** Not one file of the project folder (cdktf.out, the state and its backup, results, logs) holds `secret`. */
export function expectNowhere(dir: string, secret: string): void {
  const holding = filesUnder(dir).filter((f) => fs.readFileSync(f).includes(secret));
  expect(holding).toEqual([]);
}

/**
 * Removed without purging: what the install brought is left as dpkg's "rc" (its configuration) or "un"
 * (known, not installed), nothing else differs from before the install.
 */
export function expectPackagesBack(pristine: string, installed: string, after: string): void {
  const lines = (text: string) => new Set(text.split("\n").filter(Boolean));
  const [before, during, now] = [lines(pristine), lines(installed), lines(after)];
  expect([...before].filter((l) => !now.has(l))).toEqual([]);
  const extra = [...now].filter((l) => !before.has(l));
  expect(extra.length).toBeGreaterThan(0);
  for (const line of extra) {
    const name = line.split(" ")[0];
    expect({ line, installed: during.has(`${name} ii `) }).toEqual({
      line: expect.stringMatching(/^\S+ (rc|un) $/),
      installed: true,
    });
  }
}

/** Absent as a check, then for real, then again: the three results. */
export async function absentThrice(
  sb: Sandbox,
  handler: string,
  event: Record<string, unknown>,
  secrets: string[] = [],
) {
  const before = await vmFingerprint(sb);
  const check = await runInstaller(sb, handler, { ...event, state: "absent", check: true }, { secrets });
  expectSucceeded(check);
  expect(await vmFingerprint(sb)).toEqual(before);
  const real = await runInstaller(sb, handler, { ...event, state: "absent" }, { secrets });
  expectSucceeded(real);
  const again = await runInstaller(sb, handler, { ...event, state: "absent" }, { secrets });
  expectSucceeded(again);
  return { check: check.result, real: real.result, again: again.result };
}

export const noWork = (run: InstallerRun["result"]) => ({ changes: run.changes, changed: run.changed });
