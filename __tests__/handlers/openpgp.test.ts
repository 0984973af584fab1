// The fingerprint reader against real keys: the expected values are what
// `gpg --show-keys --with-colons` printed for the fixtures (__tests__/fixtures/pgp/README.md).
import { binaryKeyring, OpenPgpError, readCertificates, v4Fingerprint } from "../../handlers/common/openpgp";
import { dearmor } from "../../handlers/common/openpgp-armour";
import {
  ALPHA_FPR,
  ALPHA_SUBKEY_FPR,
  armour,
  BETA_FPR,
  DOCKER_FPR,
  newFormat,
  PGDG_FPR,
  pgpKey,
  split,
} from "./support/pgp-fixtures";

/** The primary keys in `file`, by fingerprint, and how many subkeys came with them: what most cases compare. */
function readKeyring(file: Buffer): { primaries: string[]; subkeys: number } {
  const certificates = readCertificates(file);
  return {
    primaries: certificates.map((c) => c.fingerprint),
    subkeys: certificates.reduce((n, c) => n + c.subkeys, 0),
  };
}

const refused = (key: Buffer): OpenPgpError => {
  try {
    readKeyring(key);
  } catch (err) {
    expect(err).toBeInstanceOf(OpenPgpError);
    return err as OpenPgpError;
  }
  throw new Error("readKeyring accepted it");
};
const refusal = (key: Buffer) => refused(key).message;
const PUBLIC = "PGP PUBLIC KEY BLOCK";
const text = (s: string) => Buffer.from(s, "latin1");
/** alpha.asc with `edit` applied to its text. */
const alphaAsc = (edit: (s: string) => string = (s) => s) => text(edit(pgpKey("alpha.asc").toString("latin1")));

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

  it("a keyring of two keys names both, in file order; two armour blocks are one too many", () => {
    expect(readKeyring(Buffer.concat([pgpKey("beta.gpg"), pgpKey("alpha.gpg")])).primaries).toEqual([
      BETA_FPR,
      ALPHA_FPR,
    ]);
    expect(readKeyring(armour(PUBLIC, Buffer.concat([pgpKey("beta.gpg"), pgpKey("alpha.gpg")]))).primaries).toEqual([
      BETA_FPR,
      ALPHA_FPR,
    ]);
    const two = refused(Buffer.concat([pgpKey("alpha.asc"), Buffer.from("\n"), pgpKey("docker-release.asc")]));
    expect(two.message).toMatch(/^a second armour block, "-----BEGIN PGP PUBLIC KEY BLOCK-----" at line \d+/);
    expect(two.hiddenKeys.sort()).toEqual([ALPHA_FPR, DOCKER_FPR].sort());
  });
});

describe("openpgp: the keyring rebuilt from the packets read", () => {
  it.each(["alpha", "beta"])("%s, armoured or binary: exactly the bytes gpg --export wrote", (name) => {
    for (const file of [`${name}.asc`, `${name}.gpg`])
      expect(binaryKeyring(readCertificates(pgpKey(file))).equals(pgpKey(`${name}.gpg`))).toBe(true);
  });

  it.each(["docker-release.asc", "pgdg.asc"])("%s: every packet kept, headers as gpg writes them", (file) => {
    expect(binaryKeyring(readCertificates(pgpKey(file))).equals(dearmor(pgpKey(file)))).toBe(true);
  });

  it(
    "trust and marker packets and photo IDs (with their signatures) are dropped; direct-key signatures and " +
      "third-party certifications kept",
    () => {
      const [primary, uid, uidSig, subkey, binding] = split(pgpKey("alpha.gpg")).map(([tag, body]) =>
        newFormat(tag, body),
      );
      const trust = newFormat(12, Buffer.from([0, 0]));
      const photo = newFormat(17, Buffer.from([0x10, 0x01, 0x00, 0x00, 0xff, 0xd8]));
      const served = Buffer.concat([
        newFormat(10, Buffer.from("PGP")),
        primary,
        uidSig,
        trust,
        uid,
        uidSig,
        uidSig,
        photo,
        uidSig,
        trust,
        subkey,
        binding,
        trust,
      ]);
      const kept = split(binaryKeyring(readCertificates(served))).map(([tag, body]) => [tag, body.length]);
      const [p, u, s, k, b] = split(pgpKey("alpha.gpg")).map(([tag, body]) => [tag, body.length]);
      expect(kept).toEqual([p, s, u, s, s, k, b]);
    },
  );

  it("the same served key gives the same bytes, however its armour was laid out", () => {
    const laidOut = [
      alphaAsc(),
      alphaAsc((s) => s.replace(/\n/g, "\r\n")),
      armour(PUBLIC, pgpKey("alpha.gpg"), { checksum: false, headers: ["Comment: x"] }),
    ];
    const built = laidOut.map((f) => binaryKeyring(readCertificates(f)).toString("hex"));
    expect(new Set(built).size).toBe(1);
  });
});

/** `data` armoured without a checksum, the unused low bits of its last base64 digit set: the same bytes to a lenient decoder. */
function strayBits(data: Buffer): Buffer {
  const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const b64 = data.toString("base64");
  const pad = b64.length - b64.replace(/=+$/, "").length;
  expect(pad).toBeGreaterThan(0); // the fixture's length leaves unused bits to set
  const last = b64.length - pad - 1;
  const stray = `${b64.slice(0, last)}${digits[digits.indexOf(b64[last]) | 1]}${b64.slice(last + 1)}`;
  expect(Buffer.from(stray, "base64").equals(data)).toBe(true);
  return Buffer.from(
    `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${stray.match(/.{1,64}/g)!.join("\n")}\n-----END PGP PUBLIC KEY ` +
      `BLOCK-----\n`,
  );
}

describe("openpgp: the armour is one PUBLIC KEY BLOCK, every line accounted for", () => {
  const data = pgpKey("alpha.gpg");
  it.each([
    [
      "a trailing space on BEGIN",
      alphaAsc((s) => s.replace("BLOCK-----\n", "BLOCK----- \n")),
      /^line 1 is "-----BEGIN PGP PUBLIC KEY BLOCK----- ", not exactly .* \(it ends in " ": trailing space/,
    ],
    ["a leading space on BEGIN", alphaAsc((s) => ` ${s}`), /^line 1 is " -----BEGIN/],
    [
      "BEGIN in lower case",
      alphaAsc((s) => s.replace("PUBLIC KEY", "public key")),
      /^line 1 is "-----BEGIN PGP public key BLOCK-----"/,
    ],
    [
      "a trailing space on END",
      alphaAsc((s) => s.replace(/-----\n$/, "----- \n")),
      /"-----END PGP PUBLIC KEY BLOCK----- " \) comes after the armour checksum|comes after the armour checksum/,
    ],
    ["no END line", alphaAsc((s) => s.replace(/-----END.*\n$/, "")), /has no -----END PGP PUBLIC KEY BLOCK----- line/],
    [
      "a line after the checksum",
      alphaAsc((s) => s.replace(/\n(=[^\n]*)\n/, "\n$1\nAAAA\n")),
      /comes after the armour checksum/,
    ],
    [
      "two checksum lines",
      alphaAsc((s) => s.replace(/\n(=[^\n]*)\n/, "\n$1\n$1\n")),
      /comes after the armour checksum/,
    ],
    ["a wrong checksum", armour(PUBLIC, data, { checksum: "=AAAA" }), /checksum does not match its contents/],
    [
      "a checksum of 3 digits",
      armour(PUBLIC, data, { checksum: "=AAA" }),
      /armour checksum at line \d+ is not "=" and 4 base64 digits/,
    ],
    [
      "a checksum with a trailing space",
      alphaAsc((s) => s.replace(/\n(=[^\n]*)\n/, "\n$1 \n")),
      /is not "=" and 4 base64 digits/,
    ],
    [
      "an unknown header",
      armour(PUBLIC, data, { headers: ["Hash: SHA256"] }),
      /the armour header "Hash" \(line 2\) is not one a key block has/,
    ],
    [
      "a header line that is not one",
      armour(PUBLIC, data, { headers: ["Comment:no-space"] }),
      /line 2 of the armour block is neither a header nor the blank line/,
    ],
    [
      "no blank line after BEGIN",
      alphaAsc((s) => s.replace("-----\n\n", "-----\n")),
      /line 2 of the armour block is neither a header nor the blank line/,
    ],
    [
      "a BEGIN line among the headers",
      armour(PUBLIC, data, { headers: ["-----BEGIN PGP MESSAGE-----"] }),
      /"-----BEGIN PGP MESSAGE-----" inside the armour block at line 2/,
    ],
    [
      "a comment line in the data",
      alphaAsc((s) => s.replace("\n\n", "\n\n# key follows\n")),
      /line 3 of the armour block is not base64 \("# key follows"\)/,
    ],
    [
      "trailing white space on a data line",
      alphaAsc((s) => s.replace(/\n\n([^\n]*)\n/, "\n\n$1\t\n")),
      /line 3 of the armour block ends in white space/,
    ],
    ["padding inside the data", alphaAsc((s) => s.replace(/\n\n([^\n]*)\n/, "\n\nAA==\n$1\n")), /not canonical base64/],
    ["base64 whose last digit carries stray bits", strayBits(data), /not canonical base64/],
    [
      "text before",
      Buffer.concat([text("key:\n"), pgpKey("alpha.asc")]),
      /^text before the armour at line 1 \("key:"\)/,
    ],
    [
      "text after",
      Buffer.concat([pgpKey("alpha.asc"), text("--\nsig\n")]),
      /^text after the armour at line \d+ \("--"\)/,
    ],
    ["a NUL byte after", Buffer.concat([pgpKey("alpha.asc"), Buffer.from([0])]), /^binary data after the armour/],
    ["binary packets after", Buffer.concat([pgpKey("alpha.asc"), pgpKey("beta.gpg")]), /^binary data after the armour/],
    [
      "a second block",
      Buffer.concat([pgpKey("alpha.asc"), armour("PGP SIGNATURE", data)]),
      /^a second armour block, "-----BEGIN PGP SIGNATURE-----"/,
    ],
    [
      "armour after binary packets",
      Buffer.concat([pgpKey("alpha.gpg"), pgpKey("beta.asc")]),
      /^armour after the binary packets at byte \d+/,
    ],
    ["only white space", text("\n\n"), /^it is empty/],
  ])("%s is refused, naming it", (_what, file, why) => {
    expect(refusal(typeof file === "string" ? text(file) : file)).toMatch(why);
  });

  it("CRLF line ends, headers, no checksum, blank lines around: all accounted for, the same packets", () => {
    for (const file of [
      alphaAsc((s) => s.replace(/\n/g, "\r\n")),
      armour(PUBLIC, data, {
        headers: ["Version: GnuPG v1", "Comment: https://example.invalid/key", "Charset: UTF-8"],
      }),
      armour(PUBLIC, data, { checksum: false }),
      alphaAsc((s) => `\n${s}\n\n`),
    ]) {
      expect(dearmor(file).equals(data)).toBe(true);
    }
  });

  it("a refusal carries every primary key found anywhere in the file, for the message", () => {
    expect(
      refused(Buffer.concat([pgpKey("alpha.asc"), armour("PGP MESSAGE", pgpKey("beta.gpg"))])).hiddenKeys.sort(),
    ).toEqual([ALPHA_FPR, BETA_FPR].sort());
    expect(refused(Buffer.concat([pgpKey("alpha.asc"), pgpKey("beta.gpg")])).hiddenKeys.sort()).toEqual(
      [ALPHA_FPR, BETA_FPR].sort(),
    );
    expect(refused(armour(PUBLIC, pgpKey("beta.gpg"), { checksum: "=AAAA" })).hiddenKeys).toEqual([BETA_FPR]);
    expect(refused(text("<html>404</html>")).hiddenKeys).toEqual([]);
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
    expect(refusal(Buffer.from("<html>404</html>"))).toMatch(
      /^it is neither OpenPGP packets nor an armour block \(line 1: "<html>404<\/html>"\)/,
    );
    expect(refusal(Buffer.from([0x80, 0x00]))).toMatch(/it holds a tag 0 packet/);
    expect(
      refusal(Buffer.from("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n")),
    ).toMatch(/holds no packets/);
    const signature = split(pgpKey("beta.gpg")).find(([tag]) => tag === 2)!;
    expect(refusal(newFormat(2, signature[1]))).toMatch(/holds no public key/);
  });

  it("packets a published key has no business holding: secret key, compressed data", () => {
    const [, body] = split(pgpKey("alpha.gpg"))[0];
    expect(refusal(newFormat(5, body))).toMatch(/secret key packet/);
    expect(refusal(Buffer.concat([pgpKey("alpha.gpg"), newFormat(8, Buffer.from([0, 1, 2]))]))).toMatch(
      /compressed data packet/,
    );
  });

  it("a subkey with no primary before it; a user ID or signature before the first primary", () => {
    const [[, primary], [, uid], [, sig], [, subkey]] = split(pgpKey("alpha.gpg"));
    expect(refusal(newFormat(14, subkey))).toMatch(/subkey comes before any primary key/);
    expect(refusal(Buffer.concat([newFormat(13, uid), newFormat(6, primary)]))).toMatch(
      /a user ID packet comes before the first primary key/,
    );
    expect(refusal(Buffer.concat([newFormat(2, sig), pgpKey("alpha.gpg")]))).toMatch(
      /a signature packet comes before the first primary key/,
    );
  });

  it("the same primary key twice", () => {
    expect(refusal(Buffer.concat([pgpKey("alpha.gpg"), pgpKey("alpha.gpg")]))).toBe(
      `primary key ${ALPHA_FPR} appears twice`,
    );
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
