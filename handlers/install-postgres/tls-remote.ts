// The server certificate on the VM: read for the plan (the certificate, the public half of its key, the
// drop-in, the VM's host names), and written by the "tls" change: a key made here for each certificate,
// signed with the stack's CA key (or the given pair), sent on stdin and never on a command line, the key
// 0600 owned by postgres; then a reload, as ssl_cert_file and ssl_key_file are read on reload.
import { createPrivateKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { isIPv6 } from "node:net";
import { quote } from "../../shared/shell-quote";
import type { Remote } from "../common/exec";
import { runLong } from "../common/exec";
import type { Cluster } from "./pg";
import { clusterUnit, normalizeListen } from "./pg";
import type { Run } from "./run";
import { psqlJson } from "./server";
import {
  pemText,
  type TlsDecision,
  type TlsEvent,
  type TlsSeen,
  tlsDropInContent,
  tlsEventProblems,
  tlsFiles,
} from "./tls";
import { issueServerCertificate } from "./x509-issue";

const DAY_MS = 24 * 3600 * 1000;

/** The host part of the kit's "user@host:port" target. */
export function targetAddress(target: string): string {
  return target
    .replace(/^[^@]*@/, "")
    .replace(/:\d+$/, "")
    .replace(/^\[(.*)\]$/, "$1");
}

/** What the plan needs; the settings' contradictions and a CA key that is not the CA's refuse first. */
export async function readTls(
  ctx: Pick<Run, "remote" | "secrets" | "target"> & { event: TlsEvent },
  configFile: string,
): Promise<TlsSeen> {
  const { remote, event, secrets } = ctx;
  // The kit registers the definition's secrets; these two come from a file and a variable of their own.
  secrets.add(event.tls_ca_key || undefined, "tls_ca_key");
  secrets.add(event.tls_key || undefined, "tls_key");
  const problems = tlsEventProblems(event);
  if (event.tls === "stack-ca" && !problems.length) {
    const ca = new X509Certificate(event.tls_ca_cert);
    if (!ca.ca) problems.push("tls_ca_cert is not a CA certificate (basicConstraints CA:TRUE)");
    if (!ca.checkPrivateKey(createPrivateKey(event.tls_ca_key)))
      problems.push(
        "tls_ca_key is not the key of tls_ca_cert: the stack's CA file is damaged; delete it to make a new CA",
      );
  }
  if (problems.length) throw new Error(`TLS settings: ${problems.join("; ")}`);
  const f = tlsFiles(configFile);
  const r = await remote.run(
    // Each part ends in a newline of its own: a PEM file may lack its last one.
    `echo '--- cert'; cat ${quote(f.cert)} 2>/dev/null; echo; echo '--- key'; ` +
      `[ -e ${quote(f.key)} ] && openssl pkey -in ${quote(f.key)} -pubout 2>/dev/null; ` +
      `echo '--- dropin'; cat ${quote(f.dropIn)} 2>/dev/null && echo '--- present'; ` +
      "echo '--- host'; hostname; hostname -f 2>/dev/null; true",
    { user: "postgres", env: { LC_ALL: "C" }, label: "reading the server certificate", timeoutMs: 30_000 },
  );
  const part = (name: string) => r.stdout.split(`--- ${name}\n`)[1]?.split(/^--- /m)[0] ?? "";
  const dropIn = part("dropin");
  return {
    now: Date.now(),
    address: targetAddress(ctx.target),
    hostnames: [
      ...new Set(
        part("host")
          .split("\n")
          .map((h) => h.trim())
          .filter(Boolean),
      ),
    ],
    certPem: part("cert").includes("BEGIN CERTIFICATE") ? `${part("cert").trim()}\n` : null,
    keyPublicPem: part("key").includes("BEGIN PUBLIC KEY") ? part("key") : null,
    dropInText: r.stdout.includes("--- present\n") ? dropIn : null,
  };
}

/** A new key and a certificate for `names` signed by the stack's CA, valid tls_valid_days from now. */
export async function issueCertificate(event: TlsEvent, names: string[]): Promise<{ cert: string; key: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const notBefore = new Date(Date.now() - 5 * 60_000);
  const cert = issueServerCertificate({
    caCert: event.tls_ca_cert,
    caKey: event.tls_ca_key,
    publicKey,
    names,
    notBefore,
    notAfter: new Date(notBefore.getTime() + event.tls_valid_days * DAY_MS),
  });
  return { cert, key: pemText(String(privateKey.export({ type: "pkcs8", format: "pem" }))) };
}

/** Writes `path` as postgres from stdin, atomically, with `mode` from the start (umask 077 until chmod). */
async function writePrivate(remote: Remote, path: string, content: string, mode: string): Promise<void> {
  const p = quote(path);
  await remote.run(
    `umask 077; t=$(mktemp ${quote(`${path}.XXXXXX`)}) || exit 1; ` +
      `cat > "$t" && chmod ${mode} "$t" && mv -f "$t" ${p} || { rm -f "$t"; exit 1; }`,
    { user: "postgres", stdin: content, label: `writing ${path}`, timeoutMs: 30_000, mutates: true },
  );
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
  const unit = clusterUnit(cluster);
  await progress.step(
    `systemctl reload ${unit} (server certificate)`,
    () => runLong(remote, `systemctl reload ${quote(unit)}`, { label: `systemctl reload ${unit}`, timeoutMs: 120_000 }),
    "reload",
  );
  await checkServed(run, cluster, f);
  if (pair) await checkPresented(run, cluster, pair.cert, f.cert);
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
      `not the one written to ${file} (SHA-256 ${written}): ` +
      `see ${cluster.logFile ?? "the cluster's log"} on the VM for why it was not loaded`,
  );
}

const SSL_FILES_SQL =
  "select json_build_object('cert', current_setting('ssl_cert_file'), 'key', current_setting('ssl_key_file'), " +
  "'errors', coalesce((select json_agg(name || ': ' || error) from pg_file_settings where error is not null " +
  "and name like 'ssl%'), '[]'::json))";

/** After the reload the server runs with our files, and read them without an error. */
async function checkServed(run: Run, cluster: Cluster, f: ReturnType<typeof tlsFiles>): Promise<void> {
  const now = await psqlJson<{ cert: string; key: string; errors: string[] }>(
    run.remote,
    cluster.port,
    SSL_FILES_SQL,
    "psql (checking the server certificate settings)",
  );
  if (now.cert === f.cert && now.key === f.key && !now.errors.length) return;
  throw new Error(
    `after the reload the server uses ssl_cert_file '${now.cert}' and ssl_key_file '${now.key}', not ` +
      `${f.cert} and ${f.key}${now.errors.length ? ` (${now.errors.join("; ")})` : ""}: another file sets them ` +
      `after ${f.dropIn}, or see ${cluster.logFile ?? "the cluster's log"} on the VM`,
  );
}
