// tls "debian" after "stack-ca" or "given": vm-install's drop-in, certificate and key go, and the server
// falls back to what the cluster's own files set (Debian's snakeoil certificate on a stock cluster). Pure,
// from what inspect read (pg_file_settings less the drop-in), so a check names the files and the fallback
// a run removes and then verifies.
import type { PostgresEvent } from "./decisions";
import type { SslFallback, TlsFiles, TlsSeen } from "./tls";

/** One line of pg_file_settings for ssl, ssl_cert_file or ssl_key_file, in the order the server reads them. */
export interface SslFileSetting {
  name: string;
  setting: string;
  file: string;
}

const SSL_NAMES = { ssl: "ssl", ssl_cert_file: "cert", ssl_key_file: "key" } as const;

/** ssl's value as on/off (PostgreSQL also takes true, yes, 1 and their prefixes). */
const onOff = (v: string) => (/^(on|t(r(ue?)?)?|y(es?)?|1)$/i.test(v.trim()) ? "on" : "off");

/** What the settings are without `dropIn`: the last line elsewhere, else the built-in default (boot_val). */
export function sslFallback(
  lines: readonly SslFileSetting[],
  defaults: Record<string, string>,
  dropIn: string,
): SslFallback {
  const out: SslFallback = {
    ssl: defaults.ssl ?? "off",
    cert: defaults.ssl_cert_file ?? "",
    key: defaults.ssl_key_file ?? "",
  };
  for (const l of lines) {
    const field = SSL_NAMES[l.name as keyof typeof SSL_NAMES];
    if (field && l.file !== dropIn) out[field] = l.setting;
  }
  return { ...out, ssl: onOff(out.ssl) };
}

export interface DebianTlsDecision {
  /** vm-install's files to delete (those the fallback does not name). */
  remove: string[];
  fallback: SslFallback;
  lines: string[];
  warnings: string[];
}

/**
 * Whether anything of vm-install's is left to remove (undefined: nothing). Refused when removing the drop-in
 * would turn ssl off under hostssl entries: no remote client could connect.
 */
export function decideDebianTls(
  event: Pick<PostgresEvent, "allow_remote" | "remote_ssl">,
  seen: Pick<TlsSeen, "existing" | "fallback">,
  files: TlsFiles,
): DebianTlsDecision | undefined {
  if (!seen.existing.length) return undefined;
  const fallback = seen.fallback ?? { ssl: "on", cert: "", key: "" };
  const kept = seen.existing.filter((f) => f === fallback.cert || f === fallback.key);
  const remove = seen.existing.filter((f) => !kept.includes(f));
  if (fallback.ssl !== "on" && event.allow_remote && event.remote_ssl)
    throw new Error(
      `tls "debian" removes ${files.dropIn}, and without it ssl is off (nothing else sets ssl = on), so the ` +
        "hostssl entries would admit no remote client: set ssl = on with ssl_cert_file and ssl_key_file in a " +
        'conf.d file of your own, or keep tls "stack-ca" or "given", or set remoteSsl false',
    );
  const warnings = kept.map(
    (f) => `${f} is kept: without vm-install's drop-in the server's ssl_cert_file or ssl_key_file still names it`,
  );
  if (!remove.length) return { remove, fallback, lines: [], warnings };
  const serves = fallback.ssl === "on" ? `ssl_cert_file is ${fallback.cert} again` : "ssl is off";
  return {
    remove,
    fallback,
    lines: [`vm-install's server certificate removed (tls "debian"): ${remove.join(", ")}; ${serves}`],
    warnings,
  };
}
