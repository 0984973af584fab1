// Which OS the VM runs, read from /etc/os-release, never assumed: the Nubes image is Ubuntu 22.04, the
// local sandbox Debian 12 or 13, and repository lines (Docker, PGDG) need the right distribution and codename.
// Derivatives count when they declare ID_LIKE=ubuntu or debian (Linux Mint: UBUNTU_CODENAME=jammy).

import { type RootFact, rootFact } from "./vm-facts";

export type OsFamily = "ubuntu" | "debian";

export interface OsInfo {
  /** ID as the file says it: "ubuntu", "debian", or a derivative such as "linuxmint". */
  id: string;
  /** What the installers treat it as: ID when that is ubuntu/debian, else the first match in ID_LIKE. */
  family: OsFamily;
  /** VERSION_ID, e.g. "22.04", "12"; absent on Debian testing/sid. */
  version_id?: string;
  /** The upstream codename repositories are keyed by: UBUNTU_CODENAME, else VERSION_CODENAME. */
  codename: string;
  /** PRETTY_NAME, for messages. */
  pretty_name?: string;
}

/** Thrown when the VM is not an Ubuntu or Debian system; the message says what was found. */
export class UnsupportedOsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedOsError";
  }
}

/** os-release's shell-like KEY=value lines, with "double" (backslash escapes) and 'single' quotes. */
export function parseOsReleaseText(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2].trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      value = value.slice(1, -1).replace(/\\([\\"$`])/g, "$1");
    } else if (value.startsWith("'") && value.endsWith("'") && value.length >= 2) {
      value = value.slice(1, -1);
    }
    fields[m[1]] = value;
  }
  return fields;
}

/** The OsInfo for an os-release text; throws UnsupportedOsError naming what it found. */
export function osFromRelease(text: string): OsInfo {
  const f = parseOsReleaseText(text);
  const id = (f.ID ?? "").toLowerCase();
  const like = (f.ID_LIKE ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const likeWords = like.length ? ` ID_LIKE="${like.join(" ")}"` : "";
  const found = `ID=${id || "(none)"}${likeWords}${f.PRETTY_NAME ? ` (${f.PRETTY_NAME})` : ""}`;
  const family = [id, ...like].find((x) => x === "ubuntu" || x === "debian") as OsFamily | undefined;
  if (!family) {
    throw new UnsupportedOsError(
      `unsupported OS on the VM: /etc/os-release says ${found}; these installers support Ubuntu and Debian (and ` +
        `derivatives with ID_LIKE ubuntu or debian), ` +
        "whose packages they install with apt; nothing was changed on the VM",
    );
  }
  const codename = f.UBUNTU_CODENAME || f.VERSION_CODENAME;
  if (!codename) {
    throw new UnsupportedOsError(
      `cannot tell the release codename of the VM: /etc/os-release (${found}) has neither UBUNTU_CODENAME nor ` +
        `VERSION_CODENAME`,
    );
  }
  const info: OsInfo = { id, family, codename };
  if (f.VERSION_ID) info.version_id = f.VERSION_ID;
  if (f.PRETTY_NAME) info.pretty_name = f.PRETTY_NAME;
  return info;
}

/** The VM's os-release (/etc, falling back to /usr/lib as systemd specifies): root's files. */
export const OS_RELEASE_PROBE = {
  name: "os_release",
  command: "cat /etc/os-release || cat /usr/lib/os-release",
  writer: "root",
  use: "the distribution and codename (repository lines, package names)",
} as const;

/** The OsInfo of the os_release probe's answer; throws when neither file could be read. */
export function osFromFact(fact: RootFact): OsInfo {
  // The codename goes into repository lines root writes.
  if (rootFact(fact, "the OS detection").code !== 0)
    throw new UnsupportedOsError(
      "cannot read /etc/os-release nor /usr/lib/os-release on the VM, so its distribution is unknown: " +
        "these installers support Ubuntu and Debian, which have one; nothing was changed on the VM",
    );
  return osFromRelease(fact.text);
}
