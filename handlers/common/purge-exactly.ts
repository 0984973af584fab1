// `apt-get purge` (or remove) of exactly the packages a removal decided on (removal.ts): apt's simulation must
// agree that nothing else goes, dpkg must show them gone and `dpkg --audit` must be empty afterwards.
import { command } from "../../lib/shared/shell-quote";
import type { Apt } from "./apt";
import { runLong, tail } from "./exec";

/** "purge": packages and their configuration go; "remove": the configuration (and data) stays. */
export type RemovalMode = "purge" | "remove";

const INSTALL_ENV = { DEBIAN_FRONTEND: "noninteractive", LC_MESSAGES: "C", LANGUAGE: "" };

/**
 * `apt-get purge` of exactly `names`: apt's simulation first, refused (nothing changed) when it would take
 * anything else; then dpkg's word that they are gone and that `dpkg --audit` is empty.
 */
export async function purgeExactly(apt: Apt, names: string[], mode: RemovalMode = "purge"): Promise<void> {
  const sim = await apt.remote.run(command("apt-get", mode, "-s", "-q", ...names), {
    env: { LC_ALL: "C" },
    label: `apt-get ${mode} -s`,
    timeoutMs: 120_000,
  });
  const would = [...sim.stdout.matchAll(/^(?:Purg|Remv) (\S+?)(?::\S+)?(?: |$)/gm)].map((m) => m[1]);
  const extra = would.filter((n) => !names.includes(n));
  if (extra.length)
    throw new Error(
      `removing ${names.join(" ")} would also remove ${extra.join(" ")}, which vm-install did not install: ` +
        "nothing was removed; remove what depends on them by hand first, or leave state present",
    );
  await apt.ensureDpkgHealthy();
  const purge = command(
    ...["apt-get", mode, "-y", "-q", "-o", `DPkg::Lock::Timeout=${apt.settings.lockTimeoutSec}`, ...names],
  );
  await apt.withLock(`apt-get ${mode}`, () =>
    runLong(apt.remote, purge, {
      env: INSTALL_ENV,
      label: `apt-get ${mode} ${names.join(" ")}`,
      timeoutMs: apt.settings.installTimeoutSec * 1000,
    }),
  );
  const still = [...(await apt.query(names))].filter(([, s]) => s.installed).map(([n]) => n);
  if (still.length) throw new Error(`apt-get ${mode} ran but dpkg still has ${still.join(" ")} installed`);
  const audit = await apt.remote.run("dpkg --audit", { label: "dpkg --audit", timeoutMs: 60_000, check: false });
  if (audit.stdout.trim() || audit.code !== 0)
    throw new Error(`after removing ${names.join(" ")} dpkg --audit reports: ${tail(audit.stdout, 10)}`);
}
