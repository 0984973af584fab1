// The twin cloud's own memory: what exists "in Nubes" outlives each provider process (Terraform starts
// and stops providers per command), so vApps are files here and VMs are sandboxes found by name. /run,
// like the sandboxes' own state: a reboot empties the twin cloud.
import * as fs from "node:fs";
import * as path from "node:path";

export const TWIN_STATE_DIR = process.env.VM_INSTALL_TWIN_STATE_DIR || "/run/vm-install-twin";

export interface VappRecord {
  id: string;
  vapp_name: string;
  vdc_uid: string;
  nsxt_uid: string;
  status: "running" | "suspended";
}

function vappFile(name: string): string {
  return path.join(TWIN_STATE_DIR, "nubes", "vapps", `${encodeURIComponent(name)}.json`);
}

export function readVapp(name: string): VappRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(vappFile(name), "utf8")) as VappRecord;
  } catch {
    return undefined;
  }
}

export function writeVapp(record: VappRecord): void {
  const file = vappFile(record.vapp_name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}

export function removeVapp(name: string): void {
  fs.rmSync(vappFile(name), { force: true });
}
