// The README's quickstart as printed: its two cdktf.json files and its commands, read from README.md itself
// so the tests check (and the e2e suite deploys) exactly what a newcomer copies.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";

/** The marker comment right before the existing-host cdktf.json. */
const EXISTING_HOST_MARKER = "<!-- quickstart:existing-host";

/** What the README tells the reader to replace in the existing-host file, as printed there. */
const EXISTING_HOST_PLACEHOLDERS = { address: "192.0.2.10", user: "ubuntu", privateKeyPath: "vm_key" } as const;

export interface CdktfJson {
  app: string;
  context: { vmInstall: { vms: Record<string, unknown>[] } & Record<string, unknown> };
  [key: string]: unknown;
}

export const readme = (): string => fs.readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");

/** The README's "## Quickstart" section. */
function quickstart(text: string): string {
  const start = text.indexOf("\n## Quickstart\n");
  if (start < 0) throw new Error('README.md has no "## Quickstart" section');
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The first fenced block of `lang` in `text`, its body. */
function firstFence(text: string, lang: string, what: string): string {
  const m = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (!m) throw new Error(`README.md's quickstart has no \`\`\`${lang} block for ${what}`);
  return m[1];
}

/** The two cdktf.json files of the quickstart, parsed: the Nubes one first, then the existing host's. */
export function quickstartFiles(text = readme()): { nubes: CdktfJson; existingHost: CdktfJson } {
  const section = quickstart(text);
  const marker = section.indexOf(EXISTING_HOST_MARKER);
  if (marker < 0) throw new Error(`README.md's quickstart has no "${EXISTING_HOST_MARKER}" marker`);
  return {
    nubes: JSON.parse(firstFence(section.slice(0, marker), "json", "the Nubes VM")),
    existingHost: JSON.parse(firstFence(section.slice(marker), "json", "the existing host")),
  };
}

/** The quickstart's shell command that starts with `prefix` and contains `having`, without its comment. */
export function quickstartCommand(prefix: string, having = "", text = readme()): string[] {
  const lines = [...quickstart(text).matchAll(/```bash\n([\s\S]*?)\n```/g)].flatMap((m) => m[1].split("\n"));
  const found = lines
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .find((l) => l.startsWith(prefix) && l.includes(having));
  if (!found) throw new Error(`README.md's quickstart prints no command "${prefix} ...${having}"`);
  return found.split(/\s+/);
}

/**
 * The existing-host file with the placeholders the README names replaced by `host`'s, nothing else changed;
 * throws when the printed file no longer holds those placeholders (the README and this would disagree).
 */
export function forHost(file: CdktfJson, host: { address: string; user: string; privateKeyPath: string }): CdktfJson {
  const vms = file.context.vmInstall.vms;
  if (vms.length !== 1) throw new Error(`the existing-host cdktf.json lists ${vms.length} VMs, not one`);
  for (const [key, value] of Object.entries(EXISTING_HOST_PLACEHOLDERS))
    if (vms[0][key] !== value) throw new Error(`the existing-host cdktf.json's ${key} is ${vms[0][key]}, not ${value}`);
  const copy = structuredClone(file);
  Object.assign(copy.context.vmInstall.vms[0], host);
  return copy;
}
