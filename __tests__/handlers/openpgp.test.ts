// The fingerprint reader against real keys: the expected values are what
// `gpg --show-keys --with-colons` printed for the fixtures (__tests__/fixtures/pgp/README.md).
import { dearmor, OpenPgpError, readKeyring, v4Fingerprint } from "../../handlers/common/openpgp";
import { ALPHA_FPR, ALPHA_SUBKEY_FPR, BETA_FPR, DOCKER_FPR, PGDG_FPR, pgpKey } from "./support/pgp-fixtures";

/** `body` as one new-format packet with tag `tag` (RFC 4880 4.2.2, one- or two-octet length). */
function newFormat(tag: number, body: Buffer): Buffer {
  const len = body.length < 192 ? [body.length] : [((body.length - 192) >> 8) + 192, (body.length - 192) & 0xff];
  return Buffer.concat([Buffer.from([0xc0 | tag, ...len]), body]);
}

/** The packets of a binary key, as [tag, body] (old-format headers, as gpg 2.2 writes them). */
function split(data: Buffer): [number, Buffer][] {
  const out: [number, Buffer][] = [];
  for (let at = 0; at < data.length; ) {
    const kind = data[at] & 3;
    const size = [1, 2, 4][kind];
    const length = data.readUIntBE(at + 1, size);
    out.push([(data[at] >> 2) & 0x0f, data.subarray(at + 1 + size, at + 1 + size + length)]);
    at += 1 + size + length;
  }
  return out;
}

const refusal = (key: Buffer) => {
  try {
    readKeyring(key);
  } catch (err) {
    expect(err).toBeInstanceOf(OpenPgpError);
    return (err as Error).message;
  }
  throw new Error("readKeyring accepted it");
};

describe("openpgp: primary-key fingerprints", () => {
  it.each([
    ["alpha.asc", [ALPHA_FPR], 1],
    ["alpha.gpg", [ALPHA_FPR], 1],
    ["beta.asc", [BETA_FPR], 0],
    ["beta.gpg", [BETA_FPR], 0],
    ["docker-release.asc", [DOCKER_FPR], 1],
    ["pgdg.asc", [PGDG_FPR], 0],
  ])("%s: the fingerprints gpg printed", (file, primaries, subkeys) => {
    expect(readKeyring(pgpKey(file))).toEqual({ primaries, subkeys });
  });

  it("a subkey is computed the same way but is never reported as a primary", () => {
    const subkey = split(pgpKey("alpha.gpg")).find(([tag]) => tag === 14);
    expect(subkey && v4Fingerprint(subkey[1])).toBe(ALPHA_SUBKEY_FPR);
    expect(readKeyring(pgpKey("alpha.gpg")).primaries).not.toContain(ALPHA_SUBKEY_FPR);
  });

  it("armour and binary hold the same packets; new-format headers read like old ones", () => {
    expect(dearmor(pgpKey("beta.asc").toString("latin1")).equals(pgpKey("beta.gpg"))).toBe(true);
    const rewritten = Buffer.concat(split(pgpKey("alpha.gpg")).map(([tag, body]) => newFormat(tag, body)));
    expect(readKeyring(rewritten)).toEqual({ primaries: [ALPHA_FPR], subkeys: 1 });
  });

  it("a keyring of two keys names both, in file order", () => {
    expect(readKeyring(Buffer.concat([pgpKey("beta.gpg"), pgpKey("alpha.gpg")])).primaries).toEqual([BETA_FPR, ALPHA_FPR]);
    expect(readKeyring(Buffer.concat([pgpKey("alpha.asc"), Buffer.from("\n"), pgpKey("docker-release.asc")])).primaries).toEqual([ALPHA_FPR, DOCKER_FPR]);
  });
});

describe("openpgp: what is refused", () => {
  it("damaged armour (the checksum no longer matches)", () => {
    const text = pgpKey("docker-release.asc").toString("latin1").replace("ROtzaKHG6lA3p", "ROtzaKHM6lA3p");
    expect(refusal(Buffer.from(text))).toMatch(/checksum does not match/);
  });

  it("a truncated key", () => {
    const key = pgpKey("beta.gpg");
    expect(refusal(key.subarray(0, key.length - 10))).toMatch(/truncated/);
  });

  it("not a key at all: HTML, an empty armour block, a signature without a key", () => {
    expect(refusal(Buffer.from("<html>404</html>"))).toMatch(/byte 0 is not a packet header/);
    expect(refusal(Buffer.from("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n"))).toMatch(/holds no packets/);
    const signature = split(pgpKey("beta.gpg")).find(([tag]) => tag === 2)!;
    expect(refusal(newFormat(2, signature[1]))).toMatch(/holds no public key/);
  });

  it("packets a published key has no business holding: secret key, compressed data", () => {
    const [, body] = split(pgpKey("alpha.gpg"))[0];
    expect(refusal(newFormat(5, body))).toMatch(/secret key packet/);
    expect(refusal(Buffer.concat([pgpKey("alpha.gpg"), newFormat(8, Buffer.from([0, 1, 2]))]))).toMatch(/compressed data packet/);
  });

  it("a subkey with no primary before it", () => {
    const subkey = split(pgpKey("alpha.gpg")).find(([tag]) => tag === 14)!;
    expect(refusal(newFormat(14, subkey[1]))).toMatch(/subkey comes before any primary key/);
  });

  it("v5/v6 and v3 keys, by name", () => {
    const [, body] = split(pgpKey("alpha.gpg"))[0];
    const as = (version: number) => newFormat(6, Buffer.concat([Buffer.from([version]), body.subarray(1)]));
    expect(refusal(as(6))).toMatch(/primary key 1 is a version 6 key; only version 4 keys are supported/);
    expect(refusal(as(5))).toMatch(/version 5 key/);
    expect(refusal(as(3))).toMatch(/version 3 key/);
  });

  it("partial and indeterminate lengths", () => {
    expect(refusal(Buffer.from([0xc6, 0xe1, 0x04]))).toMatch(/partial body length/);
    expect(refusal(Buffer.from([0x9b, 0x04]))).toMatch(/indeterminate length/);
  });
});
