// The server certificate, decided from what inspect saw (tls-remote.ts) and nothing else: which names it
// must cover, whether the one on the VM still serves (signed by the stack's CA, naming every name and no other,
// its key beside it, not near expiry) and the conf.d drop-in that points the server at it. Pure, so a check
// foresees a replacement in the same words a run reports it.
import { createPublicKey, X509Certificate } from "node:crypto";
import { isIP } from "node:net";
import type { PostgresEvent } from "./decisions";
import { normalizeListen, TLS_FILE_NAMES } from "./pg";
import { ipBytes } from "./x509-issue";

const DAY_MS = 24 * 3600 * 1000;

/** PEM as files hold it: \n line ends, one at the end (a generator may end with none). */
export const pemText = (pem: string) => `${pem.replace(/\r\n/g, "\n").trim()}\n`;

/** What inspect read for the certificate; `now` is the plan's clock (ms), read with it. */
export interface TlsSeen {
  now: number;
  /** The address the job reached the VM at (the stack's, never the VM's word): clients use it too. */
  address: string;
  certPem: string | null;
  /** The public key of the key file (openssl pkey -pubout): the key itself is never read back. */
  keyPublicPem: string | null;
  dropInText: string | null;
  /** Which of vm-install's three files (TlsFiles) exist, whatever they hold. */
  existing: string[];
  /** tls "debian" with the drop-in there: what the ssl settings become without it (tls-debian.ts). */
  fallback?: SslFallback;
}

/** ssl, ssl_cert_file and ssl_key_file as the server would have them without vm-install's drop-in. */
export interface SslFallback {
  ssl: string;
  cert: string;
  key: string;
}

export interface TlsFiles {
  cert: string;
  key: string;
  dropIn: string;
}

export type TlsEvent = Pick<
  PostgresEvent,
  | "tls"
  | "tls_names"
  | "tls_renew_days"
  | "tls_valid_days"
  | "tls_ca_cert"
  | "tls_ca_key"
  | "tls_cert"
  | "tls_key"
  | "listen_addresses"
>;

/** What the change does: issue (or install) a certificate, rewrite the drop-in; `lines`: its words. */
export interface TlsDecision {
  issue?: "stack-ca" | "given";
  names: string[];
  writeDropIn: boolean;
  lines: string[];
  /** What works but not as meant (a given certificate that does not cover the VM's address...). */
  warnings: string[];
}

/** The certificate, its key and the drop-in, beside the cluster's postgresql.conf. */
export function tlsFiles(configFile: string): TlsFiles {
  const dir = configFile.replace(/\/[^/]*$/, "");
  return {
    cert: `${dir}/${TLS_FILE_NAMES.cert}`,
    key: `${dir}/${TLS_FILE_NAMES.key}`,
    dropIn: `${dir}/${TLS_FILE_NAMES.dropIn}`,
  };
}

export function tlsDropInContent(files: TlsFiles): string {
  return (
    "# Written by vm-install (install-postgres): the server certificate it manages; a rerun rewrites it.\n" +
    "ssl = on\n" +
    `ssl_cert_file = '${files.cert.replace(/'/g, "''")}'\n` +
    `ssl_key_file = '${files.key.replace(/'/g, "''")}'\n`
  );
}

/**
 * The names a client may connect to, from the stack alone: the address the job reached the VM at,
 * listen_addresses, tls_names. Nothing the VM says (files, `hostname`): the stack's CA signs these, and a
 * name another VM of the stack answers to must never reach this one's certificate.
 */
export function certificateNames(event: TlsEvent, seen: Pick<TlsSeen, "address">): string[] {
  const listen = normalizeListen(event.listen_addresses)
    .split(",")
    .filter((a) => a && a !== "*");
  const all = [seen.address, ...listen, ...event.tls_names].filter((n) => n && n !== "localhost");
  return [...new Set(all)];
}

/** What `cert`'s subjectAltName names besides `names` (an address compared as bytes, a name without case). */
function namedBeyond(cert: X509Certificate, names: readonly string[]): string[] {
  const ips = new Set(names.filter((n) => isIP(n)).map((n) => ipBytes(n).toString("hex")));
  const dns = new Set(names.filter((n) => !isIP(n)).map((n) => n.toLowerCase()));
  // Node quotes an entry holding a comma or a quote, so the split cannot join two entries into a known name.
  const entries = (cert.subjectAltName ?? "").split(", ").filter(Boolean);
  return entries
    .filter((e) => {
      const ip = /^IP Address:(.+)$/.exec(e)?.[1];
      if (ip !== undefined) return !(isIP(ip) && ips.has(ipBytes(ip).toString("hex")));
      const name = /^DNS:(.+)$/.exec(e)?.[1];
      return name === undefined || !dns.has(name.toLowerCase());
    })
    .map((e) => e.replace(/^(DNS|IP Address):/, ""));
}

/** Whether `cert` names `name` in its subjectAltName (an address as an IP entry, a name as a DNS one). */
export function covers(cert: X509Certificate, name: string): boolean {
  return isIP(name) ? cert.checkIP(name) !== undefined : cert.checkHost(name, { wildcards: false }) !== undefined;
}

const spki = (key: { export(o: { type: "spki"; format: "pem" }): string | Buffer }) =>
  String(key.export({ type: "spki", format: "pem" }));

/** Why the certificate on the VM must be replaced ("" when it serves), for stack-ca. */
function caCertificateProblem(event: TlsEvent, seen: TlsSeen, names: string[]): string {
  if (!seen.certPem) return "none yet";
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(seen.certPem);
  } catch {
    return "the file on the VM is not a certificate";
  }
  const ca = new X509Certificate(event.tls_ca_cert);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return "it was not signed by the stack's CA";
  if (seen.keyPublicPem !== spki(cert.publicKey)) return "its key file is missing or does not match it";
  const missing = names.filter((n) => !covers(cert, n));
  if (missing.length) return `it does not cover ${missing.join(", ")}`;
  const beyond = namedBeyond(cert, names);
  if (beyond.length) return `it also names ${beyond.join(", ")}, which the settings do not`;
  const expires = new Date(cert.validTo);
  if (expires.getTime() - seen.now < event.tls_renew_days * DAY_MS)
    return `expires ${expires.toISOString().slice(0, 10)}, within ${event.tls_renew_days} days`;
  return "";
}

/** The given certificate's problem with the VM's ("" when it is the one installed), and its warnings. */
function givenProblem(event: TlsEvent, seen: TlsSeen, names: string[]): { problem: string; warnings: string[] } {
  const cert = new X509Certificate(event.tls_cert);
  if (spki(createPublicKey(event.tls_key)) !== spki(cert.publicKey))
    throw new Error("tls_key is not the key of the first certificate in tls_cert: give the matching pair");
  const missing = names.filter((n) => !covers(cert, n));
  const expires = new Date(cert.validTo);
  const from = new Date(cert.validFrom);
  const warnings = [
    ...(from.getTime() > seen.now
      ? [
          `the given certificate is valid only from ${from.toISOString()} (the job's clock): ` +
            "clients refuse it until then",
        ]
      : []),
    ...(missing.length ? [`the given certificate does not cover ${missing.join(", ")} (verify-full fails there)`] : []),
    ...(expires.getTime() - seen.now < event.tls_renew_days * DAY_MS
      ? [`the given certificate expires ${expires.toISOString().slice(0, 10)}: give a new one`]
      : []),
  ];
  const same = seen.certPem === pemText(event.tls_cert) && seen.keyPublicPem === spki(cert.publicKey);
  return { problem: same ? "" : seen.certPem ? "another is installed" : "none yet", warnings };
}

/** The whole decision for tls "stack-ca" or "given" ("debian": tls-debian.ts). */
export function decideTls(event: TlsEvent, seen: TlsSeen, configFile: string): TlsDecision {
  const files = tlsFiles(configFile);
  const names = certificateNames(event, seen);
  const lines: string[] = [];
  let warnings: string[] = [];
  let issue: TlsDecision["issue"];
  if (event.tls === "stack-ca") {
    const problem = caCertificateProblem(event, seen, names);
    if (problem) {
      issue = "stack-ca";
      lines.push(
        problem === "none yet"
          ? `server certificate for ${names.join(", ")} issued by the stack's CA (${files.cert})`
          : `server certificate replaced (${problem}): issued by the stack's CA for ${names.join(", ")}`,
      );
    }
  } else if (event.tls === "given") {
    const given = givenProblem(event, seen, names);
    warnings = given.warnings;
    if (given.problem) {
      issue = "given";
      lines.push(
        `server certificate ${given.problem === "none yet" ? "installed" : "replaced"}: the given one (${files.cert})`,
      );
    }
  }
  const writeDropIn = seen.dropInText !== tlsDropInContent(files);
  if (writeDropIn) lines.push(`ssl_cert_file and ssl_key_file -> ${files.cert}, ${files.key} (${files.dropIn})`);
  return { issue, names, writeDropIn, lines, warnings };
}
