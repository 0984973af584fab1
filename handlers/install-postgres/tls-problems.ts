// The TLS settings a job refuses before it changes anything (a check too): contradictions, a stack CA
// that is not one, and a given pair the server could not serve or no verifying client would accept (a key
// that is not the certificate's, one locked by a passphrase, a certificate already expired or without a
// name of tls_names). What still works, if not as meant, is a warning of tls.ts instead.
import { createPrivateKey, createPublicKey, type KeyObject, X509Certificate } from "node:crypto";
import type { TlsEvent } from "./tls";
import { covers } from "./tls";

const spki = (key: KeyObject) => String(key.export({ type: "spki", format: "pem" }));

/** The settings' own contradictions, before anything is read: the handler's refusal, in the settings' words. */
function tlsEventProblems(event: TlsEvent): string[] {
  const problems: string[] = [];
  if (event.tls === "stack-ca" && (!event.tls_ca_cert || !event.tls_ca_key))
    problems.push('tls "stack-ca" needs tls_ca_cert and tls_ca_key (the stack sends them from its CA file)');
  if (event.tls === "given" && (!event.tls_cert || !event.tls_key))
    problems.push('tls "given" needs tls_cert and tls_key (tlsCertVariable and tlsKeyVariable)');
  if (event.tls_valid_days <= event.tls_renew_days)
    problems.push(
      `tls_valid_days (${event.tls_valid_days}) must be more than tls_renew_days (${event.tls_renew_days}), ` +
        "or every run would replace the certificate",
    );
  return problems;
}

function caProblems(event: TlsEvent): string[] {
  const ca = new X509Certificate(event.tls_ca_cert);
  const problems: string[] = [];
  if (!ca.ca) problems.push("tls_ca_cert is not a CA certificate (basicConstraints CA:TRUE)");
  if (!ca.checkPrivateKey(createPrivateKey(event.tls_ca_key)))
    problems.push(
      "tls_ca_key is not the key of tls_ca_cert: the stack's CA file is damaged; delete it to make a new CA",
    );
  return problems;
}

/** The given pair's refusals; `now`: the job's clock (ms). Never quotes the key: node's errors do not either. */
export function givenPairProblems(event: TlsEvent, now: number): string[] {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(event.tls_cert);
  } catch (err) {
    return [`tls_cert: its first PEM block is not a certificate openssl can read (${(err as Error).message})`];
  }
  let key: KeyObject;
  try {
    key = createPublicKey(event.tls_key);
  } catch (err) {
    const locked = /passphrase|encrypted/i.test(`${(err as Error).message} ${event.tls_key.slice(0, 40)}`);
    return [
      locked
        ? "tls_key is encrypted with a passphrase, which the server cannot ask for on a reload: give it " +
          "unencrypted (openssl pkey -in server.key -out server-plain.key)"
        : `tls_key: not a private key openssl can read (${(err as Error).message})`,
    ];
  }
  const problems: string[] = [];
  if (spki(key) !== spki(cert.publicKey))
    problems.push(
      `tls_key is not the key of the first certificate in tls_cert (${cert.subject.replace(/\n/g, ", ")}, ` +
        `SHA-256 ${cert.fingerprint256}): give that certificate's own key, or put the key's certificate first`,
    );
  const expired = new Date(cert.validTo);
  if (expired.getTime() <= now)
    problems.push(
      `tls_cert expired on ${expired.toISOString().slice(0, 10)}: every client that verifies (sslmode ` +
        "verify-ca or verify-full) would refuse it; give a renewed certificate",
    );
  const missing = event.tls_names.filter((n) => !covers(cert, n));
  if (missing.length)
    problems.push(
      `tls_cert does not cover ${missing.join(", ")} of tlsNames, so verify-full clients using those names ` +
        "would be refused: give a certificate naming them, or take them out of tlsNames",
    );
  return problems;
}

/** Every TLS refusal, before anything is read or changed; throws one error naming them all. */
export function refuseTlsSettings(event: TlsEvent, now: number): void {
  const problems = tlsEventProblems(event);
  if (!problems.length && event.tls === "stack-ca") problems.push(...caProblems(event));
  if (!problems.length && event.tls === "given") problems.push(...givenPairProblems(event, now));
  if (problems.length) throw new Error(`TLS settings: ${problems.join("; ")}. Nothing was changed.`);
}
