// access_port_list in the twin: the VM accepts new TCP connections from outside only on the listed ports,
// as Nubes opens only those. The rule lives in the sandbox's own network namespace (nft, inet table
// vm_install_access, input hook), so it dies with the sandbox and never outlives it on the host.
import { spawnSync } from "node:child_process";
import { readState } from "../../sandbox/state";
import { TwinError } from "../protocol/diagnostics";

const TABLE = "vm_install_access";

/** The ports of a checked access_port_list (a JSON list of port strings). */
export function parsePorts(list: unknown): number[] {
  return (JSON.parse(String(list)) as string[]).map(Number);
}

function rules(ports: number[]): string {
  const allowed = ports.length ? `tcp dport != { ${ports.join(", ")} } ` : "";
  return [
    // add + delete: an empty table to delete when there was none, so the file works either way
    // (nft 1.0.6 has no "destroy").
    `add table inet ${TABLE}`,
    `delete table inet ${TABLE}`,
    `table inet ${TABLE} {`,
    "  chain input {",
    "    type filter hook input priority 0; policy accept;",
    '    iifname "lo" accept',
    `    meta l4proto tcp ct state new ${allowed}drop`,
    "  }",
    "}",
    "",
  ].join("\n");
}

/** Applies (or re-applies) the VM's open ports in its sandbox's network namespace. */
export function applyAccessPorts(sandbox: string, ports: number[]): void {
  const netns = readState(sandbox)?.netns;
  if (!netns)
    throw new TwinError(
      `nubes_vc_vm_v3: sandbox ${sandbox} has no network namespace recorded`,
      `Is it running? \`npm run sandbox list\`; remove it with \`npm run sandbox down ${sandbox}\` and deploy again.`,
    );
  const r = spawnSync("ip", ["netns", "exec", netns, "nft", "-f", "-"], { input: rules(ports), encoding: "utf8" });
  if (r.status !== 0) {
    throw new TwinError(
      `nubes_vc_vm_v3: could not open ports ${ports.join(", ")} on sandbox ${sandbox}`,
      `nft in netns ${netns} said: ${(r.stderr || r.error?.message || "").trim()}`,
    );
  }
}
