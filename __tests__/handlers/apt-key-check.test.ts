// ensureAptRepository trusts a repository key only after checking it: the keyring must hold exactly the
// expected primary key(s). On any mismatch the VM gets no write command at all (so nothing is left
// behind), and the message names what was expected and what was seen.
import { ensureAptRepository } from "../../handlers/common/apt-repository";
import { ALPHA_FPR, BETA_FPR, DOCKER_FPR, fetched, pgpKey } from "./support/pgp-fixtures";
import { ScriptedRemote } from "./support/scripted-remote";

const SPEC = {
  name: "docker",
  keyUrl: "http://mirror.example.com/linux/debian/gpg",
  uri: "http://mirror.example.com/linux/debian",
  suite: "bookworm",
  components: ["stable"],
};
const fetchStep = (key: Buffer) => ({ match: "curl -fsSL", sudo: false, stdout: fetched(key) });
const writeStep = { match: 'cat > "$t"', sudo: true, stdout: "changed:wrote /etc/apt/keyrings/docker.asc (new key)\n" };

/** Runs ensureAptRepository against a VM that serves `key`; the error (if any) and every command sent. */
async function attempt(key: Buffer, fingerprints: string[]) {
  const remote = new ScriptedRemote([fetchStep(key), writeStep]);
  const error: Error | undefined = await ensureAptRepository(remote, { ...SPEC, fingerprints }).then(
    () => undefined,
    (e) => e,
  );
  return { error, calls: remote.calls, writes: remote.calls.filter((c) => c.opts.sudo) };
}

describe("apt-repository: the key is checked before it is trusted", () => {
  it("the expected key (armoured or binary) is written, byte for byte", async () => {
    for (const file of ["alpha.asc", "alpha.gpg"]) {
      const { error, writes } = await attempt(pgpKey(file), [ALPHA_FPR]);
      expect(error).toBeUndefined();
      expect(writes).toHaveLength(1);
      expect(Buffer.from(writes[0].opts.stdin as Buffer).equals(pgpKey(file))).toBe(true);
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

  it("two expected keys, both served (two armour blocks in one file), are accepted", async () => {
    const both = Buffer.concat([pgpKey("alpha.asc"), pgpKey("beta.asc")]);
    const { error, writes } = await attempt(both, [BETA_FPR, ALPHA_FPR]);
    expect(error).toBeUndefined();
    expect(writes).toHaveLength(1);
  });

  it("something that only looks like a key is refused, nothing written", async () => {
    const fake = Buffer.from("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbm90IGEga2V5IGF0IGFsbA==\n-----END PGP PUBLIC KEY BLOCK-----\n");
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
