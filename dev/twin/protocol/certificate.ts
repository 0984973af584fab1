// go-plugin's automatic mTLS, server side: Terraform hands the plugin its client certificate
// (PLUGIN_CLIENT_CERT) and expects a fresh self-signed server certificate, valid for "localhost" and
// usable as its own CA, whose DER it reads from the handshake line and trusts as the only root.
// The polyfill first: @peculiar/x509's registry (tsyringe) refuses to load without Reflect metadata.
import "reflect-metadata";
import { KeyObject, webcrypto } from "node:crypto";
import {
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  GeneralName,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";

export interface ServerCertificate {
  certPem: string;
  keyPem: string;
  /** The certificate's DER, base64 without padding, as go-plugin's handshake line carries it. */
  handshakeDer: string;
}

export async function makeServerCertificate(): Promise<ServerCertificate> {
  const keys = await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const notBefore = new Date(Date.now() - 30_000);
  const usage =
    KeyUsageFlags.digitalSignature |
    KeyUsageFlags.keyEncipherment |
    KeyUsageFlags.keyAgreement |
    KeyUsageFlags.keyCertSign;
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: ["localhost"] }, { O: ["HashiCorp"] }],
      notBefore,
      notAfter: new Date(notBefore.getTime() + 24 * 3600 * 1000 * 30),
      keys,
      extensions: [
        new BasicConstraintsExtension(true, undefined, true),
        new KeyUsagesExtension(usage, true),
        new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth, ExtendedKeyUsage.clientAuth]),
        new SubjectAlternativeNameExtension([new GeneralName("dns", "localhost")]),
      ],
    },
    webcrypto,
  );
  const keyPem = String(KeyObject.from(keys.privateKey).export({ type: "pkcs8", format: "pem" }));
  const der = Buffer.from(cert.rawData);
  return { certPem: cert.toString("pem"), keyPem, handshakeDer: der.toString("base64").replace(/=+$/, "") };
}
