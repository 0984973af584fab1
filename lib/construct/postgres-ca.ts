// The stack's CA for PostgreSQL server certificates (installers.postgres.tls "stack-ca"): one EC key and
// self-signed CA certificate per stack, made on the deploying machine by the app at synth (plain cdktf or
// bin/cdktf), into an owner-only file beside the jobs' results (.vm-install/<stack>/postgres-ca.json). Read
// from there at plan time or by the job runner, so the key is never in cdktf.out; the jobs sign each VM's
// certificate with it, and the certificate is the stack's output for clients (psql sslrootcert=). A name two
// VMs are both given: a warning.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import * as fs from "node:fs";
import { isIP } from "node:net";
import * as path from "node:path";
import type { Construct } from "constructs";
import { certificateNames, pemText, type TlsEvent } from "../../handlers/install-postgres/tls";
import { ipBytes, issueCaCertificate } from "../../handlers/install-postgres/x509-issue";
import { Annotations } from "./cdktf";
import type { VmConfig, VmInstallConfig } from "./config/types";
import { INSTALLERS } from "./installers/catalog";
import { stackCaFields } from "./installers/installer-event";
import { resultsFolder } from "./jobs/secret-trigger";

export interface StackCa {
  /** PEM "CERTIFICATE": the clients' sslrootcert. */
  readonly cert: string;
  /** PEM "PRIVATE KEY" (PKCS#8, P-256): a secret. */
  readonly key: string;
}

const CA_VALID_DAYS = 3650;

/** A new CA: a P-256 key and its self-signed certificate (CA:TRUE, pathlen 0, signs certificates only). */
export async function generateCa(commonName: string, validDays = CA_VALID_DAYS): Promise<StackCa> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const key = pemText(String(privateKey.export({ type: "pkcs8", format: "pem" })));
  const notBefore = new Date(Date.now() - 5 * 60_000);
  const notAfter = new Date(notBefore.getTime() + validDays * 24 * 3600 * 1000);
  return { cert: await issueCaCertificate({ key, commonName, notBefore, notAfter }), key };
}

/** The VMs an installer of which takes the stack's CA (install-postgres with tls "stack-ca"). */
export function stackCaVms(config: Pick<VmInstallConfig, "vms">): string[] {
  return config.vms
    .filter((vm) => INSTALLERS.some((def) => vm.installers[def.key] && Object.keys(stackCaFields(vm, def)).length))
    .map((vm) => vm.name);
}

/**
 * The names the stack's CA will sign for `vm` that synth already knows: its configured address, the
 * literals of listenAddresses, tlsNames (the handler's own rule; a Nubes address comes only at apply).
 */
export function knownCertificateNames(vm: VmConfig): string[] {
  const pg = vm.installers.postgres;
  const event = { listen_addresses: pg.listenAddresses, tls_names: pg.tlsNames } as TlsEvent;
  return certificateNames(event, { address: vm.address ?? "" });
}

/**
 * A name two stack-ca VMs are both given: the CA signs it for each, so either can answer for the other to a
 * verify-full client using it. Allowed (a failover pair may mean it), named at synth.
 */
export function sharedCertificateNames(config: Pick<VmInstallConfig, "vms">): string[] {
  const holders = new Map<string, { name: string; vms: string[] }>();
  for (const vm of config.vms.filter((v) => stackCaVms(config).includes(v.name))) {
    for (const name of knownCertificateNames(vm)) {
      const key = isIP(name) ? `ip:${ipBytes(name).toString("hex")}` : `dns:${name.toLowerCase()}`;
      const entry = holders.get(key) ?? { name, vms: [] };
      if (!entry.vms.includes(vm.name)) entry.vms.push(vm.name);
      holders.set(key, entry);
    }
  }
  return [...holders.values()]
    .filter((h) => h.vms.length > 1)
    .map((h) => {
      const vms = h.vms.map((v) => `vms[${v}]`).join(", ");
      return (
        `${vms}: each is given ${h.name} (address, listenAddresses or tlsNames), so the stack's CA signs it for ` +
        "each and either can answer a verify-full client that connects to another by it; give each VM names of " +
        "its own unless they are meant to stand in for one another"
      );
    });
}

/** Adds the warning for each name several VMs' certificates share to `scope`. */
export function warnSharedCertificateNames(scope: Construct, config: VmInstallConfig): void {
  for (const warning of sharedCertificateNames(config)) Annotations.of(scope).addWarning(warning);
}

/** Where the stack's CA is kept (owner-only, outside cdktf.out). */
export function caFile(resultsDir: string): string {
  return path.join(resultsDir, "postgres-ca.json");
}

/** The CA in `file`, or undefined when there is none or it is not whole (writeStackCa then refuses it). */
export function readCaFile(file: string): StackCa | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<StackCa>;
    const whole = parsed.cert?.includes("BEGIN CERTIFICATE") && parsed.key?.includes("PRIVATE KEY");
    return whole ? (parsed as StackCa) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes the stack's CA file when a VM needs it and there is none; returns it when made. An existing file is
 * never replaced, and of two synths at once only one makes it: the CA is written whole to a file of this
 * process's own, then linked to its name, which fails when that exists (the other synth's CA is kept). A
 * file that is there but not a whole CA is refused, naming it: the VMs' certificates may have come from it.
 */
export async function writeStackCa(projectDir: string, config: VmInstallConfig): Promise<string | undefined> {
  if (!stackCaVms(config).length) return undefined;
  const dir = resultsFolder(projectDir, config.stackName);
  const file = caFile(dir);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const ca = await generateCa(`vm-install PostgreSQL CA of ${config.stackName}`);
    const own = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomUUID()}.tmp`);
    try {
      fs.writeFileSync(own, `${JSON.stringify(ca)}\n`, { mode: 0o600, flag: "wx" });
      fs.linkSync(own, file);
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      fs.rmSync(own, { force: true });
    }
  }
  if (!readCaFile(file))
    throw new Error(
      `${file} is not a whole PostgreSQL CA (cert and key): restore it, or move it away to make a new CA ` +
        "(every stack-ca VM's certificate is then issued again, and clients need the new postgres_ca_cert)",
    );
  return undefined;
}
