// The host's apt configuration, read so the sandbox image uses the very same mirror: machines like this
// one reach only a mirror (often a dated snapshot) that the host is already configured for, and no
// mirror host name may be baked into the project.
import * as fs from "node:fs";
import * as path from "node:path";
import { DEFAULT_RELEASE, type Release, releaseSuites, SUPPORTED_RELEASES } from "./release";

export interface AptSource {
  file: string;
  uris: string[];
  suites: string[];
  components: string[];
  /** Raw deb822 field values (continuation lines kept) other than the ones above, e.g. Signed-By. */
  extra: Array<[string, string]>;
}

function parseDeb822(file: string, text: string): AptSource[] {
  const out: AptSource[] = [];
  const stanzas = text.split(/\n\s*\n/);
  for (const stanza of stanzas) {
    const fields: Array<[string, string]> = [];
    for (const line of stanza.split("\n")) {
      if (/^\s*#/.test(line) || line.trim() === "") continue;
      if (/^\s/.test(line) && fields.length) {
        fields[fields.length - 1][1] += `\n${line}`; // continuation (e.g. an inline Signed-By key)
        continue;
      }
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
      if (m) fields.push([m[1], m[2]]);
    }
    const get = (k: string) => fields.find(([f]) => f.toLowerCase() === k.toLowerCase())?.[1].trim();
    if (!get("Types")?.split(/\s+/).includes("deb")) continue;
    if ((get("Enabled") ?? "yes").toLowerCase() === "no") continue;
    const skip = new Set(["types", "uris", "suites", "components", "enabled"]);
    out.push({
      file,
      uris: (get("URIs") ?? "").split(/\s+/).filter(Boolean),
      suites: (get("Suites") ?? "").split(/\s+/).filter(Boolean),
      components: (get("Components") ?? "").split(/\s+/).filter(Boolean),
      extra: fields.filter(([k]) => !skip.has(k.toLowerCase())),
    });
  }
  return out;
}

function parseOneLine(file: string, text: string): AptSource[] {
  const out: AptSource[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    const m = /^deb\s+(?:\[([^\]]*)\]\s+)?(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!m) continue;
    const extra: Array<[string, string]> = [];
    for (const opt of (m[1] ?? "").split(/\s+/).filter(Boolean)) {
      const [k, v] = opt.split("=", 2);
      // One-line option names map onto deb822 field names (signed-by -> Signed-By, arch -> Architectures).
      const field =
        k === "arch" ? "Architectures" : k.replace(/(^|-)([a-z])/g, (_s, d: string, c: string) => d + c.toUpperCase());
      if (v !== undefined) extra.push([field, v.replace(/,/g, " ")]);
    }
    out.push({ file, uris: [m[2]], suites: [m[3]], components: m[4].split(/\s+/).filter(Boolean), extra });
  }
  return out;
}

/** Every enabled `deb` entry of the host, from sources.list and sources.list.d (*.list and *.sources only,
 * as apt itself reads them: a renamed `.disabled` file is ignored). */
export function readHostAptSources(root = "/etc/apt"): AptSource[] {
  const out: AptSource[] = [];
  const main = path.join(root, "sources.list");
  if (fs.existsSync(main)) out.push(...parseOneLine(main, fs.readFileSync(main, "utf8")));
  const dir = path.join(root, "sources.list.d");
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    /* no directory */
  }
  for (const n of names) {
    const f = path.join(dir, n);
    if (n.endsWith(".list")) out.push(...parseOneLine(f, fs.readFileSync(f, "utf8")));
    else if (n.endsWith(".sources")) out.push(...parseDeb822(f, fs.readFileSync(f, "utf8")));
  }
  return out;
}

export interface ImageApt {
  /** The mirror debootstrap installs from: the host's URI for the base suite. */
  mirror: string;
  /** Keyring the host verifies that mirror with (debootstrap --keyring), when it names a file. */
  keyring?: string;
  /** The image's /etc/apt/sources.list.d/debian.sources. */
  sourcesFile: string;
  /** Keyring files the image's sources reference that the host has (copied in if the image lacks them). */
  keyrings: string[];
  /** apt.conf.d files copied from the host: name -> content. */
  confFiles: Array<[string, string]>;
}

/** Statement heads at brace depth 0 of an apt.conf file, comments removed. */
function topLevelKeys(text: string): string[] {
  const clean = text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split("\n")
    .filter((l) => !/^\s*(#|\/\/)/.test(l))
    .join("\n");
  const keys: string[] = [];
  let depth = 0;
  let inStr = false;
  let atStart = true;
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i];
    if (inStr) {
      if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') {
      inStr = true;
      atStart = false;
    } else if (c === "{") {
      depth++;
      atStart = depth === 0;
    } else if (c === "}") {
      depth--;
      atStart = depth === 0;
    } else if (c === ";") {
      atStart = depth === 0;
    } else if (depth === 0 && atStart && /\S/.test(c)) {
      const m = /^[^\s{"]+/.exec(clean.slice(i));
      if (m) keys.push(m[0]);
      atStart = false;
    }
  }
  return keys;
}

/**
 * Host apt.conf.d files that only configure fetching (`Acquire::...`: validity of a dated snapshot,
 * proxies, index targets). Those are what make the host's mirror work; hooks such as PackageKit or
 * appstream refer to programs the image does not have, so they stay out. Credentials
 * (auth.conf.d) are deliberately never copied into an image.
 */
function hostAcquireConf(root = "/etc/apt"): Array<[string, string]> {
  const dir = path.join(root, "apt.conf.d");
  const out: Array<[string, string]> = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const n of names) {
    // apt ignores names with other characters (and backups such as *.dpkg-old); so does this.
    if (!/^[A-Za-z0-9_.-]+$/.test(n) || /\.(dpkg-[a-z]+|ucf-[a-z]+|bak|disabled)$/.test(n) || n.includes("~")) continue;
    const f = path.join(dir, n);
    let text: string;
    try {
      if (!fs.statSync(f).isFile()) continue;
      text = fs.readFileSync(f, "utf8");
    } catch {
      continue;
    }
    const keys = topLevelKeys(text);
    if (keys.length && keys.every((k) => /^Acquire(::|$)/i.test(k))) out.push([n, text]);
  }
  return out;
}

/**
 * The host's sources for `release` (its base suite, -updates, -security). A host of another supported
 * release (a Debian 12 host asked for trixie) lends its own entries with the suite names changed: the same
 * mirror serves every release, and no other mirror may be assumed.
 */
function releaseSources(host: AptSource[], release: Release): { sources: AptSource[]; via?: Release } {
  const pick = (r: Release) => {
    const wanted = releaseSuites(r);
    return host.filter((s) => s.suites.some((x) => wanted.includes(x)));
  };
  const hasBase = (r: Release) => host.some((s) => s.suites.includes(r) && s.uris.length);
  if (hasBase(release)) return { sources: pick(release) };
  const via = SUPPORTED_RELEASES.find((r) => r !== release && hasBase(r));
  if (!via) return { sources: pick(release) };
  const from = releaseSuites(via);
  const sources = pick(via).map((s) => ({
    ...s,
    suites: s.suites.filter((x) => from.includes(x)).map((x) => release + x.slice(via.length)),
  }));
  return { sources, via };
}

export function imageAptConfig(root = "/etc/apt", release: Release = DEFAULT_RELEASE): ImageApt {
  const imageSuites = releaseSuites(release);
  const { sources, via } = releaseSources(readHostAptSources(root), release);
  const base = sources.find((s) => s.suites.includes(release) && s.uris.length);
  if (!base) {
    throw new Error(
      `no apt source for Debian ${release} on this host, nor for ` +
        `${SUPPORTED_RELEASES.filter((r) => r !== release).join(" or ")} to lend its mirror ` +
        `(looked in ${root}/sources.list and ${root}/sources.list.d/*.{list,sources}): ` +
        `the sandbox image is installed from the host's own mirror; add a "${release}" entry for it`,
    );
  }
  const signedBy = (s: AptSource) => s.extra.find(([k]) => k.toLowerCase() === "signed-by")?.[1].trim();
  const isPath = (v: string | undefined): v is string => !!v && v.startsWith("/") && !v.includes("\n");
  const stanzas: string[] = [];
  const keyrings = new Set<string>();
  for (const s of sources) {
    const suites = s.suites.filter((x) => imageSuites.includes(x));
    const lines = [
      `# from the host's ${s.file}${via ? ` (its ${via} entry, for ${release})` : ""}`,
      "Types: deb",
      `URIs: ${s.uris.join(" ")}`,
      `Suites: ${suites.join(" ")}`,
      `Components: ${s.components.join(" ")}`,
      ...s.extra.map(([k, v]) => `${k}: ${v}`),
    ];
    stanzas.push(lines.join("\n"));
    const sb = signedBy(s);
    if (isPath(sb) && fs.existsSync(sb)) keyrings.add(sb);
  }
  const missing = imageSuites.filter((x) => !sources.some((s) => s.suites.includes(x)));
  const note = missing.length ? `# the host has no source for ${missing.join(", ")}, so neither has the image\n` : "";
  const baseKey = signedBy(base);
  return {
    mirror: base.uris[0],
    keyring: isPath(baseKey) && fs.existsSync(baseKey) ? baseKey : undefined,
    sourcesFile:
      "# Written by vm-install's sandbox image build: the host's mirror, so apt works where only it is reachable.\n" +
      `${note}${stanzas.join("\n\n")}\n`,
    keyrings: [...keyrings].sort(),
    confFiles: hostAcquireConf(root),
  };
}
