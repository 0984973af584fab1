// The scripted steps of the inventory of grants (handlers/common/grants.ts), shared by the installers'
// handler tests: one read, one atomic write of the root-only file.
import type { Answer } from "./look-answers";
import { renameOf } from "./remote-writes";
import type { Step } from "./scripted-remote";

export const GRANTS = "/var/lib/vm-install/grants.json";

/** The root-only inventory read; `inventory` undefined: no file yet. */
export const grantsRead = (inventory?: object | string): Step => ({
  match: `cat ${GRANTS}`,
  sudo: true,
  facts: { grants: grantsText(inventory) },
});

/** The grants probe's answer: the file's text (a string is taken as is), or no file (exit 3). */
export const grantsText = (inventory?: object | string): Answer =>
  inventory === undefined ? { code: 3 } : typeof inventory === "string" ? inventory : `${JSON.stringify(inventory)}\n`;

/** The inventory written (atomically, 0600 in a 0700 directory); `expectWritten` sees the parsed JSON. */
export const grantsWrite = (expectWritten: (written: Record<string, unknown>) => void): Step => ({
  match: renameOf(GRANTS),
  sudo: true,
  check: (c, o) => {
    expect(c).toContain("mkdir -m 0700 /var/lib/vm-install");
    expect(c).toContain("chmod 0700 /var/lib/vm-install");
    expect(c).toContain("m=0600;");
    expectWritten(JSON.parse(String(o.stdin)));
  },
});
