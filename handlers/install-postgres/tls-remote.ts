// The server certificate on the VM: read for the plan (one framed look: the certificate, its key's public
// half, the drop-in; with tls "debian", what the ssl settings fall back to), written by the "tls" change (a key
// made here or the given one, on stdin only, 0600 owned by postgres) or removed on "debian"; then a reload
// (ssl_cert_file and ssl_key_file are read on reload) and the handshake that proves what the server presents.
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { isIPv6 } from "node:net";
import { quote } from "../../lib/shared/shell-quote";
import type { Remote } from "../common/exec";
import { runLong } from "../common/exec";
import { writeRemoteFile } from "../common/remote-file";
import { defineLook } from "../common/vm-facts";
import type { Cluster } from "./pg";
import { clusterUnit, normalizeListen } from "./pg";
import type { Run } from "./run";
import { psqlJson } from "./server";
import {
  pemText,
  type SslFallback,
  type TlsDecision,
  type TlsEvent,
  type TlsFiles,
  type TlsSeen,
  tlsDropInContent,
  tlsFiles,
} from "./tls";
import { type DebianTlsDecision, type SslFileSetting, sslFallback } from "./tls-debian";
import { issueServerCertificate } from "./x509-issue";

const DAY_MS = 24 * 3600 * 1000;

/** The host part of the kit's "user@host:port" target. */
export function targetAddress(target: string): string {
  return target
    .replace(/^[^@]*@/, "")
    .replace(/:\d+$/, "")
    .replace(/^\[(.*)\]$/, "$1");
}

/**
 * The look at vm-install's three files, one exec as postgres (the key is its 0600 file). Every answer is
 * the postgres user's to write: it decides what to replace and which of the files to remove, as postgres,
 * never which names to issue for (certificateNames takes the stack's alone).
 */
export function tlsLook(f: TlsFiles) {
  const exists = (name: string, path: string) =>
    ({
      name,
      command: `[ -e ${quote(path)} ]`,
      writer: "service",
      use: `is ${path} there (tls debian removes it)`,
    }) as const;
  return defineLook("the server certificate look", [
    {
      name: "cert",
      command: `cat ${quote(f.cert)}`,
      writer: "service",
      readAs: "postgres",
      use: "the certificate: kept or replaced",
    },
    {
      name: "key",
      command: `[ -e ${quote(f.key)} ] && openssl pkey -in ${quote(f.key)} -pubout`,
      writer: "service",
      readAs: "postgres",
      use: "its key's public half: does it match the certificate",
    },
    {
      name: "dropin",
      command: `cat ${quote(f.dropIn)}`,
      writer: "service",
      readAs: "postgres",
      use: "the drop-in: rewritten if it differs",
    },
    exists("exists:dropin", f.dropIn),
    exists("exists:cert", f.cert),
    exists("exists:key", f.key),
  ] as const);
}

/** What the plan needs: the certificate, its key's public half, the drop-in; in "debian" mode the fallback. */
export async function readTls(
  ctx: Pick<Run, "remote" | "target"> & { event: TlsEvent },
  port: number,
  configFile: string,
): Promise<TlsSeen> {
  const { remote, event } = ctx;
  const f = tlsFiles(configFile);
  const look = tlsLook(f);
  const r = await remote.run(look.script, {
    user: "postgres",
    env: { LC_ALL: "C" },
    label: "reading the server certificate",
    timeoutMs: 30_000,
  });
  const facts = look.parse(r.stdout);
  const cert = facts.get("cert");
  const key = facts.get("key");
  const dropIn = facts.get("dropin");
  const existing = (["dropin", "cert", "key"] as const)
    .filter((n) => facts.get(`exists:${n}`).code === 0)
    .map((n) => ({ dropin: f.dropIn, cert: f.cert, key: f.key })[n]);
  return {
    now: Date.now(),
    address: targetAddress(ctx.target),
    certPem: cert.code === 0 && cert.text.includes("BEGIN CERTIFICATE") ? `${cert.text.trim()}\n` : null,
    keyPublicPem: key.code === 0 && key.text.includes("BEGIN PUBLIC KEY") ? key.text : null,
    dropInText: dropIn.code === 0 ? dropIn.text : null,
    existing,
    fallback: event.tls === "debian" && existing.length ? await readFallback(remote, port, f.dropIn) : undefined,
  };
}

const FILE_SETTINGS_SQL =
  "select json_build_object('lines', coalesce((select json_agg(json_build_object('name', name, " +
  "'setting', setting, 'file', sourcefile) order by seqno) from pg_file_settings where error is null and " +
  "name in ('ssl', 'ssl_cert_file', 'ssl_key_file')), '[]'::json), 'defaults', (select json_object_agg(name, " +
  "boot_val) from pg_settings where name in ('ssl', 'ssl_cert_file', 'ssl_key_file')))";

/** The ssl settings as the configuration files have them without vm-install's drop-in. */
async function readFallback(remote: Remote, port: number, dropIn: string): Promise<SslFallback> {
  const r = await psqlJson<{ lines: SslFileSetting[]; defaults: Record<string, string> }>(
    remote,
    port,
    FILE_SETTINGS_SQL,
    "psql (the ssl settings of the configuration files)",
  );
  return sslFallback(r.lines, r.defaults, dropIn);
}

/** A new key and a certificate for `names` signed by the stack's CA, valid tls_valid_days from now. */
export async function issueCertificate(event: TlsEvent, names: string[]): Promise<{ cert: string; key: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const notBefore = new Date(Date.now() - 5 * 60_000);
  const cert = await issueServerCertificate({
    caCert: event.tls_ca_cert,
    caKey: event.tls_ca_key,
    publicKey,
    names,
    notBefore,
    notAfter: new Date(notBefore.getTime() + event.tls_valid_days * DAY_MS),
  });
  return { cert, key: pemText(String(privateKey.export({ type: "pkcs8", format: "pem" }))) };
}

/**
 * Writes `path` as postgres (remote-file.ts), `mode` given, not kept: the key is 0600 whatever was there. As
 * postgres, never root: a link in the cluster's directory (postgres' own) leads only where postgres may write.
 */
async function writePrivate(remote: Remote, path: string, content: string, mode: string): Promise<void> {
  await writeRemoteFile(remote, { path, content, writer: { user: "postgres" }, mode });
}

/** The "tls" change: key and certificate, the drop-in, a reload, and the server's word that it took them. */
export async function applyTls(run: Run, cluster: Cluster, configFile: string, d: TlsDecision): Promise<void> {
  const { remote, event, progress, secrets } = run;
  const f = tlsFiles(configFile);
  let pair: { cert: string; key: string } | undefined;
  if (d.issue) {
    const issued =
      d.issue === "stack-ca"
        ? await issueCertificate(event, d.names)
        : { cert: pemText(event.tls_cert), key: pemText(event.tls_key) };
    pair = issued;
    secrets.add(issued.key, "tls server key");
    await progress.step(
      `writing the server certificate ${f.cert}`,
      async () => {
        await writePrivate(remote, f.key, issued.key, "0600");
        await writePrivate(remote, f.cert, issued.cert, "0644");
      },
      "tls",
    );
  }
  if (d.writeDropIn) await writePrivate(remote, f.dropIn, tlsDropInContent(f), "0644");
  await reload(run, cluster);
  await checkServed(run, cluster, f, `another file sets them after ${f.dropIn}`);
  if (pair) await checkPresented(run, cluster, pair.cert, f.cert);
}

async function reload(run: Run, cluster: Cluster): Promise<void> {
  const unit = clusterUnit(cluster);
  await run.progress.step(
    `systemctl reload ${unit} (server certificate)`,
    () =>
      runLong(run.remote, `systemctl reload ${quote(unit)}`, { label: `systemctl reload ${unit}`, timeoutMs: 120_000 }),
    "reload",
  );
}

/**
 * The "tls" change of tls "debian": vm-install's files go, a reload, and the server's word and handshake
 * that it serves the fallback certificate (a relative ssl_cert_file is the data directory's).
 */
export async function removeTls(run: Run, cluster: Cluster, configFile: string, d: DebianTlsDecision): Promise<void> {
  const f = tlsFiles(configFile);
  await run.remote.run(`rm -f -- ${d.remove.map(quote).join(" ")}`, {
    user: "postgres",
    label: `removing ${d.remove.join(", ")}`,
    timeoutMs: 30_000,
    mutates: true,
  });
  await reload(run, cluster);
  await checkServed(run, cluster, d.fallback, `a file still sets them, or ${f.dropIn} is back`);
  if (d.fallback.ssl !== "on") return;
  const file = d.fallback.cert.startsWith("/") ? d.fallback.cert : `${cluster.dataDir}/${d.fallback.cert}`;
  const pem = await run.remote.run(`cat ${quote(file)}`, {
    user: "postgres",
    label: `reading ${file}`,
    timeoutMs: 30_000,
  });
  await checkPresented(run, cluster, pem.stdout, file);
}

/** Where the job reaches the server from the VM itself: loopback when it listens there, else its first address. */
export function probeAddress(listen: string, port: number): string {
  const entries = normalizeListen(listen).split(",");
  const host = entries.includes("*") || entries.includes("localhost") ? "127.0.0.1" : entries[0];
  return isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The server presents the certificate just written: a reload that could not load it (a key it refuses)
 * keeps the old one and only logs why, so the handshake is the proof (openssl s_client, STARTTLS postgres).
 */
async function checkPresented(run: Run, cluster: Cluster, cert: string, file: string): Promise<void> {
  const at = probeAddress(run.event.listen_addresses, cluster.port);
  const r = await run.remote.run(
    `timeout 30 openssl s_client -connect ${quote(at)} -starttls postgres </dev/null 2>/dev/null | ` +
      "openssl x509 -noout -fingerprint -sha256",
    { check: false, env: { LC_ALL: "C" }, label: `openssl s_client -connect ${at}`, timeoutMs: 60_000 },
  );
  const presented = /Fingerprint=([0-9A-F:]+)/i.exec(r.stdout)?.[1]?.toUpperCase();
  const written = new X509Certificate(cert).fingerprint256;
  if (presented === written) return;
  throw new Error(
    `after the reload the server at ${at} presents ` +
      `${presented ? `another certificate (SHA-256 ${presented})` : "no certificate"}, ` +
      `not the one in ${file} (SHA-256 ${written}): ` +
      `see ${cluster.logFile ?? "the cluster's log"} on the VM for why it was not loaded`,
  );
}

const SSL_FILES_SQL =
  "select json_build_object('cert', current_setting('ssl_cert_file'), 'key', current_setting('ssl_key_file'), " +
  "'errors', coalesce((select json_agg(name || ': ' || error) from pg_file_settings where error is not null " +
  "and name like 'ssl%'), '[]'::json))";

/** After the reload the server runs with the files `f` names, and read them without an error; `or`: why not. */
async function checkServed(run: Run, cluster: Cluster, f: { cert: string; key: string }, or: string): Promise<void> {
  const now = await psqlJson<{ cert: string; key: string; errors: string[] }>(
    run.remote,
    cluster.port,
    SSL_FILES_SQL,
    "psql (checking the server certificate settings)",
  );
  if (now.cert === f.cert && now.key === f.key && !now.errors.length) return;
  throw new Error(
    `after the reload the server uses ssl_cert_file '${now.cert}' and ssl_key_file '${now.key}', not ` +
      `${f.cert} and ${f.key}${now.errors.length ? ` (${now.errors.join("; ")})` : ""}: ${or}, ` +
      `or see ${cluster.logFile ?? "the cluster's log"} on the VM`,
  );
}
