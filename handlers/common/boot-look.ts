// The kit's first look at the VM, one SSH exec before any installer work: which OS it is, where cloud-init
// is with the first boot, the apt proxy file, and the installer's own first probes (installer-model.ts
// firstLook). Read together because they were round trips in a row; cloud-init alone is looked at again
// while the first boot goes on (cloud-init.ts).
import { APT_PROXY_PROBE, proxyFileFrom } from "./apt-proxy";
import { CLOUD_INIT_PROBES, type CloudInitProbe, cloudInitFrom } from "./cloud-init";
import type { Remote } from "./exec";
import { OS_RELEASE_PROBE, type OsInfo, osFromFact } from "./os-release";
import { defineLook, type Fact, type Facts, type Probe } from "./vm-facts";

export const BOOT_LOOK = defineLook("the first look at the VM", [
  OS_RELEASE_PROBE,
  ...CLOUD_INIT_PROBES,
  APT_PROXY_PROBE,
] as const);

/** What the boot look saw. */
export interface BootFacts {
  os: OsInfo;
  cloudInit: CloudInitProbe;
  /** The apt proxy file's content, undefined when there is none. */
  proxyFile: string | undefined;
  /** The answers of the installer's own probes read with it (installer-model.ts firstLook). */
  installer: (name: string) => Fact | undefined;
}

/**
 * The boot look (unprivileged), with the installer's `own` probes in the same exec; throws
 * UnsupportedOsError on a VM that is not Ubuntu or Debian.
 */
export async function lookAtBoot(remote: Remote, own: readonly Probe[] = []): Promise<BootFacts> {
  const look = own.length ? defineLook(BOOT_LOOK.what, [...BOOT_LOOK.probes, ...own]) : BOOT_LOOK;
  const r = await remote.run(look.script, {
    env: { LC_ALL: "C" },
    label: "reading /etc/os-release, cloud-init's state and the apt proxy file",
    timeoutMs: 30_000,
  });
  const facts = look.parse(r.stdout) as Facts<typeof BOOT_LOOK.probes>;
  const names = new Set(own.map((p) => p.name));
  const byName = facts.get as (name: string) => Fact;
  return {
    os: osFromFact(facts.get("os_release")),
    cloudInit: cloudInitFrom(facts.get),
    proxyFile: proxyFileFrom(facts.get("apt_proxy")),
    installer: (name) => (names.has(name) ? byName(name) : undefined),
  };
}
