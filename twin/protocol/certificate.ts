// go-plugin's automatic mTLS, server side: Terraform hands the plugin its client certificate
// (PLUGIN_CLIENT_CERT) and expects a fresh self-signed server certificate, valid for "localhost" and
// usable as its own CA, whose DER it reads from the handshake line and trusts as the only root.
import { generate } from "selfsigned";

export interface ServerCertificate {
  certPem: string;
  keyPem: string;
  /** The certificate's DER, base64 without padding, as go-plugin's handshake line carries it. */
  handshakeDer: string;
}

export async function makeServerCertificate(): Promise<ServerCertificate> {
  const notBeforeDate = new Date(Date.now() - 30_000);
  const pems = await generate(
    [
      { name: "commonName", value: "localhost" },
      { name: "organizationName", value: "HashiCorp" },
    ],
    {
      keyType: "ec",
      curve: "P-256",
      algorithm: "sha256",
      notBeforeDate,
      notAfterDate: new Date(notBeforeDate.getTime() + 24 * 3600 * 1000 * 30),
      extensions: [
        { name: "basicConstraints", cA: true, critical: true },
        {
          name: "keyUsage",
          digitalSignature: true,
          keyEncipherment: true,
          keyAgreement: true,
          keyCertSign: true,
          critical: true,
        },
        { name: "extKeyUsage", serverAuth: true, clientAuth: true },
        { name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }] },
      ],
    },
  );
  const der = Buffer.from(pems.cert.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, ""), "base64");
  return { certPem: pems.cert, keyPem: pems.private, handshakeDer: der.toString("base64").replace(/=+$/, "") };
}
