// Certificates name only what the stack knows (issue 30): the VM's address as the job reaches it, listen
// literals and tlsNames, never anything the VM says. Over generated hostile contents of the files the postgres
// user writes (forged "--- host" sections, other names, NULs, frame look-alikes) and a hostile `hostname`, the
// certificate the job issues names exactly the stack's names, and what inspect reads is each file's own bytes.
import { X509Certificate } from "node:crypto";
import { certificateNames, type TlsEvent, type TlsSeen } from "../../handlers/install-postgres/tls";
import { issueCertificate, readTls } from "../../handlers/install-postgres/tls-remote";
import { generateCa, type StackCa } from "../../lib/construct/postgres-ca";
import { rng } from "../support/seeded-random";
import { newCluster, pgJob, remoteTlsEvent, tlsEventFrom } from "./support/postgres-jobs";
import { PG_CONF_DIR, PostgresVm, TLS_CERT, TLS_DROPIN, TLS_KEY } from "./support/postgres-vm";

let ca: StackCa;
let forged: string;
beforeAll(async () => {
  ca = await generateCa("ca");
  // A real certificate of the stack's CA for names of another VM: the file may hold one.
  forged = (await issueCertificate(tlsEventFrom(ca), ["other-vm.db.internal", "10.200.99.7"])).cert;
});

const pick = <T>(next: () => number, from: readonly T[]): T => from[Math.floor(next() * from.length)];

const HOSTILE_NAMES = ["other-vm.db.internal", "10.200.99.7", "db1", "2001:db8::99", "*.db.internal", "localhost"];
const PIECES = [
  "--- host\n",
  "--- cert\n",
  "--- key\n",
  "--- dropin\n",
  "--- present\n",
  "--- existing\n",
  `${TLS_DROPIN}\n`,
  "\0",
  "\n",
  "cert Zm9vCjA=\n",
  "existing:cert\n",
  "-----BEGIN CERTIFICATE-----\n",
  ...HOSTILE_NAMES.map((n) => `${n}\n`),
];

/** What a postgres user could write into a file: forged sections, names, NULs, a frame, a real certificate. */
function hostile(next: () => number): string {
  let s = next() < 0.3 ? () => forged : () => "";
  let out = s();
  const n = 1 + Math.floor(next() * 10);
  for (let i = 0; i < n; i++) {
    out +=
      next() < 0.7
        ? pick(next, PIECES)
        : String.fromCharCode(...Array.from({ length: Math.floor(next() * 12) }, () => Math.floor(next() * 256)));
  }
  s = () => (next() < 0.2 ? forged : "");
  return out + s();
}

const sans = (pem: string) => (new X509Certificate(pem).subjectAltName ?? "").split(", ").sort();
const STACK_SANS = ["DNS:db.example.test", "IP Address:192.0.2.10"];
const EVENT = () => remoteTlsEvent(ca, { tls_names: ["db.example.test"] });

describe("the names a stack-ca certificate is issued for", () => {
  test("40 hostile certificate files and host names: the job issues for exactly the stack's names", async () => {
    const next = rng(30_2);
    for (let round = 0; round < 40; round++) {
      const vm = new PostgresVm(newCluster());
      const content = hostile(next);
      vm.state.files[TLS_CERT] = content;
      vm.hostnames = [pick(next, HOSTILE_NAMES), pick(next, HOSTILE_NAMES)];
      const run = await pgJob(vm, EVENT());
      expect({ round, content, status: run.status, sans: sans(vm.state.files[TLS_CERT]) }).toEqual({
        round,
        content,
        status: "ok",
        sans: STACK_SANS,
      });
      expect(String(run.changes)).not.toMatch(/other-vm|10\.200\.99\.7|2001:db8::99|\*\.db|db1\b/);
    }
  });

  test("a stack-CA certificate naming more than the stack (an earlier run took names from the VM) is replaced", async () => {
    const vm = new PostgresVm(newCluster());
    await pgJob(vm, EVENT());
    const wide = await issueCertificate(tlsEventFrom(ca), ["192.0.2.10", "db.example.test", "other-vm.db.internal"]);
    vm.state.files[TLS_CERT] = wide.cert;
    vm.state.files[TLS_KEY] = wide.key;
    const check = await pgJob(vm, { ...EVENT(), check: true });
    expect(check.would_change).toEqual([
      "server certificate replaced (it also names other-vm.db.internal, which the settings do not): " +
        "issued by the stack's CA for 192.0.2.10, db.example.test",
    ]);
    await pgJob(vm, EVENT());
    expect(sans(vm.state.files[TLS_CERT])).toEqual(STACK_SANS);
  });

  test("certificateNames takes the address, listen literals and tls_names only, whatever else the look holds", () => {
    const next = rng(30_3);
    const LISTEN = ["*", "localhost", "10.0.0.5", "10.0.0.5,db.example.test", "localhost,2001:db8::5", "*,10.0.0.6"];
    const TLS_NAMES = [[], ["db.example.test"], ["a.example.test", "10.0.0.7"], ["10.0.0.5"]];
    for (let round = 0; round < 200; round++) {
      const event = tlsEventFrom(ca, { listen_addresses: pick(next, LISTEN), tls_names: pick(next, TLS_NAMES) });
      const address = pick(next, ["10.0.0.5", "192.0.2.10", "db1.example.test"]);
      const seen = {
        now: Date.now(),
        address,
        hostnames: [pick(next, HOSTILE_NAMES), hostile(next)],
        certPem: hostile(next),
        keyPublicPem: null,
        dropInText: hostile(next),
        existing: [hostile(next)],
      } as TlsSeen;
      const listen = event.listen_addresses.split(",").filter((a) => a !== "*" && a !== "localhost");
      const stack = [...new Set([address, ...listen, ...event.tls_names])];
      expect({ round, names: certificateNames(event, seen) }).toEqual({ round, names: stack });
    }
  });
});

describe("what inspect reads of the certificate files", () => {
  const CONF = `${PG_CONF_DIR}/postgresql.conf`;
  const event: TlsEvent = tlsEventFrom({ cert: "", key: "" });

  test("40 hostile certificate and drop-in files: each read is the file's own, existence as it is", async () => {
    const next = rng(30_4);
    for (let round = 0; round < 40; round++) {
      const vm = new PostgresVm(newCluster());
      const cert = hostile(next);
      const dropIn = next() < 0.5 ? hostile(next) : undefined;
      vm.state.files[TLS_CERT] = cert;
      if (dropIn !== undefined) vm.state.files[TLS_DROPIN] = dropIn;
      const seen = await readTls({ remote: vm, target: vm.target, event }, 5432, CONF);
      expect({ round, certPem: seen.certPem, dropInText: seen.dropInText, existing: seen.existing }).toEqual({
        round,
        certPem: cert.includes("BEGIN CERTIFICATE") ? `${cert.trim()}\n` : null,
        dropInText: dropIn ?? null,
        existing: dropIn === undefined ? [TLS_CERT] : [TLS_DROPIN, TLS_CERT],
      });
      expect(seen.address).toBe("192.0.2.10");
      expect(Object.keys(seen)).not.toContain("hostnames");
    }
  });
});
