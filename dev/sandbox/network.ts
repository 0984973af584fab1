// The sandbox's network: a namespace of its own joined to the host by a veth pair on 10.200.N.0/24,
// with NAT out of the host's default-route interface so apt inside reaches the host's mirror. N is
// claimed by an atomic mkdir, so concurrent sandboxes (in one process or many) never share a subnet.
import * as fs from "node:fs";
import * as path from "node:path";
import { childEnv, run, runOk } from "./run";
import { runDirOf, type SandboxState, SUBNET_DIR } from "./state";
import { waitFor } from "./wait";

const SUBNET_PREFIX = "10.200";
const MIN_N = 1;
const MAX_N = 254;

export interface NetPlan {
  subnet: number;
  netns: string;
  hostVeth: string;
  nftTable: string;
  hostAddress: string;
  address: string;
}

export function netPlan(name: string, n: number): NetPlan {
  return {
    subnet: n,
    netns: `vmis-${name}`,
    // Interface names have 15 bytes; the subnet number is unique while claimed, the name may be long.
    hostVeth: `vmis${n}`,
    nftTable: `vmis_${n}`,
    hostAddress: `${SUBNET_PREFIX}.${n}.1`,
    address: `${SUBNET_PREFIX}.${n}.2`,
  };
}

const ip = (args: string[]) => runOk("ip", args, { env: childEnv() });

function claimPath(n: number): string {
  return path.join(SUBNET_DIR, String(n));
}

/** The sandbox holding subnet N, if any (reads the claim directory). */
function subnetHolder(n: number): string | undefined {
  try {
    return fs.readFileSync(path.join(claimPath(n), "name"), "utf8").trim();
  } catch {
    return undefined;
  }
}

export function listClaims(): Array<{ subnet: number; name: string | undefined }> {
  try {
    return fs
      .readdirSync(SUBNET_DIR)
      .filter((d) => /^\d+$/.test(d))
      .map((d) => ({ subnet: Number(d), name: subnetHolder(Number(d)) }));
  } catch {
    return [];
  }
}

/** Claims the lowest free N. A claim whose sandbox has no run directory any more is a leftover (stop
 * releases the claim before it removes the run directory, start creates the run directory first). */
export async function claimSubnet(name: string): Promise<number> {
  fs.mkdirSync(SUBNET_DIR, { recursive: true, mode: 0o755 });
  // Addresses something else on the host already uses (another tool, a leftover veth) are skipped.
  const routes =
    (await run("ip", ["-4", "-o", "addr", "show"], { env: childEnv() })).stdout +
    (await run("ip", ["-4", "route", "show", "table", "all"], { env: childEnv() })).stdout;
  for (let n = MIN_N; n <= MAX_N; n++) {
    const dir = claimPath(n);
    try {
      fs.mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const holder = subnetHolder(n);
      const age = (() => {
        try {
          return Date.now() - fs.statSync(dir).mtimeMs;
        } catch {
          return 0;
        }
      })();
      // Without a name file the claimer may be between its mkdir and its write: only old ones are stale.
      const stale = holder ? !fs.existsSync(runDirOf(holder)) : age > 10_000;
      if (!stale) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      try {
        fs.mkdirSync(dir);
      } catch {
        continue; // someone else took it in between
      }
    }
    if (routes.includes(`${SUBNET_PREFIX}.${n}.`)) {
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    fs.writeFileSync(path.join(dir, "name"), `${name}\n`);
    return n;
  }
  throw new Error(
    `no free sandbox subnet in ${SUBNET_PREFIX}.${MIN_N}-${MAX_N}.0/24: every one is claimed under ${SUBNET_DIR} ` +
      `or in use on the host; stop sandboxes with \`npm run sandbox down\``,
  );
}

export function releaseSubnet(n: number, name: string): void {
  // Only our own claim: after a crash the number may already belong to a newer sandbox.
  if (subnetHolder(n) === name || subnetHolder(n) === undefined)
    fs.rmSync(claimPath(n), { recursive: true, force: true });
}

async function defaultRouteDevice(): Promise<{ dev: string; mtu: number } | undefined> {
  const r = await run("ip", ["-4", "route", "show", "default"], { env: childEnv() });
  const m = /\bdev (\S+)/.exec(r.stdout);
  if (!m) return undefined;
  let mtu = 1500;
  try {
    mtu = Number(fs.readFileSync(`/sys/class/net/${m[1]}/mtu`, "utf8").trim()) || 1500;
  } catch {
    /* keep default */
  }
  return { dev: m[1], mtu };
}

/**
 * The sandbox's own nft table: NAT out of the uplink, the MSS clamp, and with `hostOnly` the fence. A table
 * per sandbox: teardown deletes exactly it and nothing of the host's own rules. The clamp matters where the
 * uplink MTU is below 1500 (1400 here): without it large TLS/HTTP replies stall.
 */
function nftRules(name: string, plan: NetPlan, uplinkDev: string, hostOnly: boolean): string {
  const cidr = `${SUBNET_PREFIX}.${plan.subnet}.0/24`;
  // Refused, not dropped: a blocked connect fails at once (apt says "Could not connect ..."), no time-out.
  const fence = hostOnly ? `\n    iifname "${plan.hostVeth}" reject with icmp type admin-prohibited` : "";
  return `table ip ${plan.nftTable} {
  comment "vm-install sandbox ${name}"
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    ip saddr ${cidr} oifname "${uplinkDev}" masquerade
  }
  chain forward {
    type filter hook forward priority mangle; policy accept;
    iifname "${plan.hostVeth}" tcp flags syn tcp option maxseg size set rt mtu
    oifname "${plan.hostVeth}" tcp flags syn tcp option maxseg size set rt mtu${fence}
  }
}
`;
}

/** Creates netns, veth, addresses, default route, NAT and MSS clamp. Safe to undo with teardownNetwork
 * at any point of failure: every step is keyed by names recorded in the plan before it runs. `hostOnly`:
 * the sandbox reaches the host side (10.200.N.1) and nothing beyond it (a VM behind a proxy). */
export async function setupNetwork(
  name: string,
  plan: NetPlan,
  log: (l: string) => void,
  opts: { hostOnly?: boolean } = {},
): Promise<void> {
  const uplink = await defaultRouteDevice();
  const mtu = uplink?.mtu ?? 1500;
  await ip(["netns", "add", plan.netns]);
  // The target side is created inside the namespace directly, named like a VM's first NIC.
  await ip([
    "link",
    "add",
    plan.hostVeth,
    "mtu",
    String(mtu),
    "type",
    "veth",
    "peer",
    "name",
    "eth0",
    "mtu",
    String(mtu),
    "netns",
    plan.netns,
  ]);
  await ip(["addr", "add", `${plan.hostAddress}/24`, "dev", plan.hostVeth]);
  await ip(["link", "set", plan.hostVeth, "up"]);
  await ip(["-n", plan.netns, "link", "set", "lo", "up"]);
  await ip(["-n", plan.netns, "addr", "add", `${plan.address}/24`, "dev", "eth0"]);
  await ip(["-n", plan.netns, "link", "set", "eth0", "up"]);
  await ip(["-n", plan.netns, "route", "add", "default", "via", plan.hostAddress]);

  if (!uplink) {
    log("warning: the host has no IPv4 default route, so the sandbox gets no NAT: apt inside will not reach a mirror");
    return;
  }
  // Forwarding is host-wide and other sandboxes (or the host's own set-up) may rely on it: it is turned
  // on, never back off.
  fs.writeFileSync("/proc/sys/net/ipv4/ip_forward", "1\n");
  const rules = nftRules(name, plan, uplink.dev, !!opts.hostOnly);
  const r = await run("nft", ["-f", "-"], { input: rules, env: childEnv() });
  if (r.code !== 0) {
    throw new Error(
      `nft could not create table ip ${plan.nftTable} for sandbox ${name}: ${r.stderr.trim()} ` +
        "(is the nf_tables kernel module available?)",
    );
  }
}

function vethExists(dev: string): boolean {
  return fs.existsSync(`/sys/class/net/${dev}`);
}

async function nftTableExists(table: string): Promise<boolean> {
  const r = await run("nft", ["list", "table", "ip", table], { env: childEnv() });
  return r.code === 0;
}

function netnsExists(netns: string): boolean {
  return fs.existsSync(path.join("/run/netns", netns));
}

/** Removes what setupNetwork made; every step tolerates the thing being absent already. */
export async function teardownNetwork(state: Pick<SandboxState, "netns" | "hostVeth" | "nftTable">): Promise<void> {
  const env = childEnv();
  // Deleting our end removes the pair at once; waiting for netns deletion to do it is asynchronous and
  // can take as long as any process (or a mount namespace) still pins the namespace.
  if (state.hostVeth && vethExists(state.hostVeth)) await run("ip", ["link", "del", state.hostVeth], { env });
  if (state.netns && netnsExists(state.netns)) {
    const r = await run("ip", ["netns", "del", state.netns], { env });
    if (r.code !== 0 && netnsExists(state.netns)) {
      throw new Error(`could not delete network namespace ${state.netns}: ${r.stderr.trim()}`);
    }
  }
  if (state.nftTable && (await nftTableExists(state.nftTable))) {
    const r = await run("nft", ["delete", "table", "ip", state.nftTable], { env });
    // Two cleaners (a prune and a `down`) may race for the same leftover: gone is as good as deleted.
    if (r.code !== 0 && (await nftTableExists(state.nftTable))) {
      throw new Error(
        `could not delete nft table ip ${state.nftTable}: ${r.stderr.trim()}; ` +
          `remove it with: nft delete table ip ${state.nftTable}`,
      );
    }
  }
  if (state.hostVeth) {
    await waitFor(`host interface ${state.hostVeth} to disappear`, () => !vethExists(state.hostVeth!), 10_000).catch(
      (e) => {
        throw new Error(`${(e as Error).message}; remove it with: ip link del ${state.hostVeth}`);
      },
    );
  }
}
