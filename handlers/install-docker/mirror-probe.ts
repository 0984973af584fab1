// When hello-world fails with registry mirrors set: which mirror does not answer. dockerd falls back to
// Docker Hub after a mirror fails and reports only Hub's error, so the mirrors are asked here, from the VM.

import { quote } from "../../lib/shared/shell-quote";
import type { Remote } from "../common/exec";

/** The mirrors the running daemon uses (docker info), whoever set them. */
export function parseMirrors(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json.trim() || "null");
    return Array.isArray(v) ? v.filter((m): m is string => typeof m === "string") : [];
  } catch {
    return [];
  }
}

/** One probe per mirror: GET <mirror>/v2/ (a registry answers 200 or 401), curl when present, else a TCP connect. */
export function probeCommand(mirrors: string[]): string {
  return mirrors
    .map((m) => {
      const url = `${m.replace(/\/+$/, "")}/v2/`;
      const hostPort = /^https?:\/\/([^/:]+)(?::([0-9]+))?/.exec(m);
      const port = hostPort?.[2] ?? (m.startsWith("https") ? "443" : "80");
      const tcp = `timeout 10 bash -c ${quote(`exec 3<>/dev/tcp/${hostPort?.[1] ?? ""}/${port}`)}`;
      return (
        `if command -v curl >/dev/null 2>&1; then c=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 ` +
        `${quote(url)} 2>&1); r=$?; else c=tcp; ${tcp} 2>/dev/null; r=$?; fi; ` +
        `printf '%s\\t%s\\t%s\\n' ${quote(m)} "$r" "$(printf '%s' "$c" | tr '\\n\\t' '  ')"`
      );
    })
    .join("\n");
}

/** The probes' lines as problems, one per mirror that does not answer as a registry. Pure. */
export function mirrorProblems(stdout: string): string[] {
  const problems: string[] = [];
  for (const line of stdout.split("\n").filter(Boolean)) {
    const [mirror, code, said] = line.split("\t");
    if (code !== "0") problems.push(`registry mirror ${mirror} does not answer (${said || `exit ${code}`})`);
    else if (said !== "tcp" && !/^(200|401)$/.test(said))
      problems.push(`registry mirror ${mirror} answers HTTP ${said} on /v2/: not a registry`);
  }
  return problems;
}

/** The daemon's mirrors that fail their probe, in words; empty when none is set or all answer. */
export async function failingMirrors(remote: Remote): Promise<string[]> {
  const info = await remote.run("docker info --format '{{json .RegistryConfig.Mirrors}}'", {
    sudo: true,
    check: false,
    label: "docker info (registry mirrors)",
    timeoutMs: 60_000,
  });
  const mirrors = parseMirrors(info.stdout);
  if (!mirrors.length) return [];
  const r = await remote.run(probeCommand(mirrors), {
    check: false,
    label: "asking the registry mirrors",
    timeoutMs: 120_000,
  });
  return mirrorProblems(r.stdout);
}
