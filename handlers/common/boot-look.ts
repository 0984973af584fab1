// The kit's first look at the VM, one SSH exec before any installer work: which OS it is, where cloud-init
// is with the first boot, and the apt proxy file. Read together because they were three round trips in a
// row; cloud-init alone is looked at again while the first boot goes on (cloud-init.ts).
import { APT_PROXY_PROBE, proxyFileFrom } from "./apt-proxy";
import { CLOUD_INIT_PROBES, type CloudInitProbe, cloudInitFrom } from "./cloud-init";
import type { Remote } from "./exec";
import { OS_RELEASE_PROBE, type OsInfo, osFromFact } from "./os-release";
import { defineLook } from "./vm-facts";

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
}

/** The boot look (unprivileged); throws UnsupportedOsError on a VM that is not Ubuntu or Debian. */
export async function lookAtBoot(remote: Remote): Promise<BootFacts> {
  const r = await remote.run(BOOT_LOOK.script, {
    env: { LC_ALL: "C" },
    label: "reading /etc/os-release, cloud-init's state and the apt proxy file",
    timeoutMs: 30_000,
  });
  const facts = BOOT_LOOK.parse(r.stdout);
  return {
    os: osFromFact(facts.get("os_release")),
    cloudInit: cloudInitFrom(facts.get),
    proxyFile: proxyFileFrom(facts.get("apt_proxy")),
  };
}
