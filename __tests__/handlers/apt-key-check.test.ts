// ensureAptRepository trusts a repository key only after checking it: the keyring must hold exactly the
// expected primary key(s) and nothing the reader cannot account for. On any mismatch the VM gets no write
// command at all (so nothing is left behind), and the message names what was expected and what was seen.
// What is written is the binary keyring rebuilt from the checked packets, never the served file: apt reads
// an .asc keyring its own way (every "-----BEGIN" block of any type), so served bytes could hold more.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ensureAptRepository } from "../../handlers/common/apt-repository";
import {
  ALPHA_FPR,
  ALPHA_SUBKEY_FPR,
  armour,
  BETA_FPR,
  DOCKER_FPR,
  fetched,
  newFormat,
  pgpKey,
  smuggled,
  split,
} from "./support/pgp-fixtures";
import { renameOf, writtenBytes } from "./support/remote-writes";
import { ScriptedRemote } from "./support/scripted-remote";

const SPEC = {
  name: "docker",
  keyUrl: "http://mirror.example.com/linux/debian/gpg",
  uri: "http://mirror.example.com/linux/debian",
  suite: "bookworm",
  components: ["stable"],
};
const fetchStep = (key: Buffer) => ({ match: "curl -fsSL", sudo: false, stdout: fetched(key) });
const writeStep = {
  match: renameOf("/etc/apt/keyrings/docker.gpg"),
  sudo: true,
  stdout: "changed:wrote /etc/apt/keyrings/docker.gpg (new key)\n",
};

/** Runs ensureAptRepository against a VM that serves `key`; the error (if any) and every command sent. */
async function attempt(key: Buffer, fingerprints: string[]) {
  const remote = new ScriptedRemote([fetchStep(key), writeStep]);
  const error: Error | undefined = await ensureAptRepository(remote, { ...SPEC, fingerprints }).then(
    () => undefined,
    (e) => e,
  );
  const writes = remote.calls.filter((c) => c.opts.sudo);
  // The keyring is the first part of the write's stdin (the source line follows it).
  return {
    error,
    calls: remote.calls,
    writes,
    keyrings: writes.map((c) => writtenBytes(c.command, c.opts.stdin ?? "")[0].bytes),
  };
}

describe("apt-repository: the key is checked before it is trusted", () => {
  it("the expected key (armoured or binary) is written as the binary keyring gpg itself exports for it", async () => {
    for (const file of ["alpha.asc", "alpha.gpg"]) {
      const { error, writes, keyrings } = await attempt(pgpKey(file), [ALPHA_FPR]);
      expect(error).toBeUndefined();
      expect(writes).toHaveLength(1);
      expect(keyrings[0].equals(pgpKey("alpha.gpg"))).toBe(true);
    }
  });

  it("a wrong key fails naming both fingerprints, and no write command reaches the VM", async () => {
    const { error, calls, writes } = await attempt(pgpKey("beta.asc"), [DOCKER_FPR]);
    expect(writes).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(error?.message).toContain(`expected ${DOCKER_FPR}`);
    expect(error?.message).toContain(`served ${BETA_FPR}`);
    expect(error?.message).toContain("the key at http://mirror.example.com/linux/debian/gpg for apt repository docker");
    expect(error?.message).toContain("nothing was written");
  });

  it("a keyring holding the expected key plus another is refused (both are named)", async () => {
    const both = Buffer.concat([pgpKey("alpha.gpg"), pgpKey("beta.gpg")]);
    const { error, writes } = await attempt(both, [ALPHA_FPR]);
    expect(writes).toEqual([]);
    expect(error?.message).toContain(`served ${ALPHA_FPR}, ${BETA_FPR}`);
    expect(error?.message).toMatch(/not expected: F6E23F56/);
  });

  it("a keyring missing one of two expected keys is refused", async () => {
    const { error, writes } = await attempt(pgpKey("alpha.asc"), [ALPHA_FPR, BETA_FPR]);
    expect(writes).toEqual([]);
    expect(error?.message).toMatch(/missing: F6E23F56/);
  });

  it(
    "two expected keys in one keyring (binary, or one armour block) are accepted; in two armour blocks they are " +
      "refused",
    async () => {
      const binary = Buffer.concat([pgpKey("alpha.gpg"), pgpKey("beta.gpg")]);
      for (const served of [binary, armour("PGP PUBLIC KEY BLOCK", binary)]) {
        const { error, keyrings } = await attempt(served, [BETA_FPR, ALPHA_FPR]);
        expect(error).toBeUndefined();
        expect(keyrings[0].equals(binary)).toBe(true);
      }
      const { error, writes } = await attempt(Buffer.concat([pgpKey("alpha.asc"), pgpKey("beta.asc")]), [
        BETA_FPR,
        ALPHA_FPR,
      ]);
      expect(writes).toEqual([]);
      expect(error?.message).toMatch(/a second armour block, "-----BEGIN PGP PUBLIC KEY BLOCK-----" at line \d+/);
    },
  );

  it("something that only looks like a key is refused, nothing written", async () => {
    const fake = Buffer.from(
      "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbm90IGEga2V5IGF0IGFsbA==\n-----END PGP PUBLIC KEY BLOCK-----\n",
    );
    const { error, writes } = await attempt(fake, [ALPHA_FPR]);
    expect(writes).toEqual([]);
    expect(error?.message).toMatch(/is not a readable OpenPGP public key/);
    expect(error?.message).toContain("nothing was written");
  });

  it("no expected fingerprint is a programming error, refused before any command", async () => {
    const remote = new ScriptedRemote([]);
    const error = await ensureAptRepository(remote, { ...SPEC, fingerprints: [] }).catch((e) => e);
    expect(error.message).toMatch(/fingerprints: at least one expected key fingerprint is required/);
    expect(remote.calls).toEqual([]);
  });
});

describe("apt-repository: a second key smuggled into the key file never reaches apt", () => {
  it.each(smuggled())("%s: refused naming the smuggled key, nothing written", async (_what, served, why) => {
    const { error, calls, writes } = await attempt(served, [ALPHA_FPR]);
    expect(writes).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(error?.message).toContain(BETA_FPR);
    expect(error?.message).toMatch(why);
    expect(error?.message).toContain("othing was written to the VM (no key, no source)");
  });
});

describe("apt-repository: what is written is rebuilt from the checked packets", () => {
  const alphaAsc = pgpKey("alpha.asc").toString("latin1");
  const [primary, uid, uidSig, ...subkey] = split(pgpKey("alpha.gpg")).map(([tag, body]) => newFormat(tag, body));
  const trust = newFormat(12, Buffer.from([0x00, 0x00]));
  const marker = newFormat(10, Buffer.from("PGP"));
  const photo = newFormat(17, Buffer.from([0x10, 0x01, 0x00, 0x00, 0xff, 0xd8, 0xff, 0xd9]));
  const accepted: [string, Buffer][] = [
    ["CRLF armour", Buffer.from(alphaAsc.replace(/\n/g, "\r\n"), "latin1")],
    [
      "armour with Version and Comment headers",
      armour("PGP PUBLIC KEY BLOCK", pgpKey("alpha.gpg"), {
        headers: ["Version: GnuPG v2", "Comment: vm-install test key"],
      }),
    ],
    ["armour without a checksum", armour("PGP PUBLIC KEY BLOCK", pgpKey("alpha.gpg"), { checksum: false })],
    ["armour between blank lines", Buffer.from(`\n\n${alphaAsc}\n\n`, "latin1")],
    ["new-format packet headers", Buffer.concat([primary, uid, uidSig, ...subkey])],
    [
      "a marker, trust packets and a photo ID with its signature",
      Buffer.concat([marker, primary, trust, uid, uidSig, trust, photo, uidSig, ...subkey, trust]),
    ],
  ];

  it.each(accepted)("%s: the keyring gpg exports for the key, byte for byte", async (_what, served) => {
    const { error, keyrings } = await attempt(served, [ALPHA_FPR]);
    expect(error).toBeUndefined();
    expect(keyrings[0].equals(pgpKey("alpha.gpg"))).toBe(true);
  });

  it("gpg reads the written keyring as the expected key and its subkey, nothing else", async () => {
    const { keyrings } = await attempt(pgpKey("alpha.asc"), [ALPHA_FPR]);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-gpg-"));
    try {
      const file = path.join(home, "docker.gpg");
      fs.writeFileSync(file, keyrings[0]);
      const colons = execFileSync("gpg", ["--homedir", home, "--batch", "--with-colons", "--show-keys", file], {
        encoding: "utf8",
      });
      const fprs = [...colons.matchAll(/^fpr:+([0-9A-F]{40}):/gm)].map((m) => m[1]);
      expect(fprs).toEqual([ALPHA_FPR, ALPHA_SUBKEY_FPR]);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
