// The test-only OpenPGP keys in __tests__/fixtures/pgp (see its README) and what gpg printed for them.
import * as fs from "node:fs";
import * as path from "node:path";

const DIR = path.join(__dirname, "..", "..", "fixtures", "pgp");

/** Primary-key fingerprints as `gpg --show-keys --with-colons` printed them (fpr lines of pub). */
export const ALPHA_FPR = "65BCE0E8CBCA4D562DB7E9CCEB56BEEFDC00166A";
/** alpha's cv25519 subkey: belongs to alpha, never a primary of its own. */
export const ALPHA_SUBKEY_FPR = "F00374A46B486AB654ADDFAABF5BEE5D45ED9F77";
export const BETA_FPR = "F6E23F56EB2274F6B22474C3279DFF154D4949E4";
export const DOCKER_FPR = "9DC858229FC7DD38854AE2D88D81803C0EBFCD88";
export const PGDG_FPR = "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8";

/** A fixture's bytes: alpha.asc, alpha.gpg, beta.asc, beta.gpg, docker-release.asc, pgdg.asc. */
export function pgpKey(file: string): Buffer {
  return fs.readFileSync(path.join(DIR, file));
}

/** What the key-fetch command prints for `key`: the VM's architecture, then the key in base64. */
export function fetched(key: Buffer, arch = "amd64"): string {
  return `${arch}\n${key.toString("base64")}`;
}

/**
 * `data` as one ASCII-armour block of `type` ("PGP PUBLIC KEY BLOCK", "PGP MESSAGE", ...), written the way
 * gpg writes it (64-column base64, a CRC-24 line) unless told otherwise; `eol` "\r\n" for CRLF files.
 */
export function armour(
  type: string,
  data: Buffer,
  opts: { headers?: string[]; checksum?: string | false; eol?: string; begin?: string } = {},
): Buffer {
  const eol = opts.eol ?? "\n";
  const b64 = data.toString("base64");
  const body = b64.match(/.{1,64}/g) ?? [];
  const sum = opts.checksum === undefined ? `=${crc24(data)}` : opts.checksum === false ? undefined : opts.checksum;
  const lines = [
    opts.begin ?? `-----BEGIN ${type}-----`,
    ...(opts.headers ?? []),
    "",
    ...body,
    ...(sum ? [sum] : []),
    `-----END ${type}-----`,
  ];
  return Buffer.from(lines.join(eol) + eol, "latin1");
}

/** RFC 4880 6.1's CRC-24 as an armour checksum's base64, written here independently of the code under test. */
function crc24(data: Buffer): string {
  let crc = 0xb704ce;
  for (const byte of data) {
    crc ^= byte << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
  }
  return Buffer.from([(crc >> 16) & 0xff, (crc >> 8) & 0xff, crc & 0xff]).toString("base64");
}

/** `body` as one new-format packet with tag `tag` (RFC 4880 4.2.2, one-, two- or five-octet length). */
export function newFormat(tag: number, body: Buffer, fiveOctet = false): Buffer {
  const len = fiveOctet
    ? [0xff, (body.length >>> 24) & 0xff, (body.length >> 16) & 0xff, (body.length >> 8) & 0xff, body.length & 0xff]
    : body.length < 192
      ? [body.length]
      : [((body.length - 192) >> 8) + 192, (body.length - 192) & 0xff];
  return Buffer.concat([Buffer.from([0xc0 | tag, ...len]), body]);
}

/** The packets of a binary key, as [tag, body] (old-format headers, as gpg 2.2 writes them). */
export function split(data: Buffer): [number, Buffer][] {
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

// alpha is the expected key in the smuggling shapes, beta the one smuggled in beside it.
const ALPHA = () => pgpKey("alpha.gpg");
const BETA = () => pgpKey("beta.gpg");
const PUBLIC = "PGP PUBLIC KEY BLOCK";
const lf = (s: string) => Buffer.from(s, "latin1");

/**
 * Key files that hold alpha where the check looks and beta somewhere else, one per way apt (or gpg) could
 * be made to read a second key: [what, the file, what the refusal must name]. Each was refused naming
 * beta's fingerprint; none may ever be written.
 */
export function smuggled(): [string, Buffer, RegExp][] {
  const alphaAsc = pgpKey("alpha.asc");
  const betaAsc = pgpKey("beta.asc");
  const asCrlf = (b: Buffer) => Buffer.from(b.toString("latin1").replace(/\n/g, "\r\n"), "latin1");
  const alphaBody = (alphaAsc.toString("latin1").split("\n\n")[1] ?? "").split("\n=")[0];
  return [
    ...["PGP MESSAGE", "PGP SIGNATURE", "PGP PRIVATE KEY BLOCK", "PGP ARMORED FILE", "SOMETHING ELSE"].map(
      (type): [string, Buffer, RegExp] => [
        `a second block of type ${type}`,
        Buffer.concat([alphaAsc, armour(type, BETA())]),
        new RegExp(`-----BEGIN ${type}-----`),
      ],
    ),
    ["a second PUBLIC KEY BLOCK", Buffer.concat([alphaAsc, betaAsc]), /second armour block/],
    [
      "a second PUBLIC KEY BLOCK after a blank line",
      Buffer.concat([alphaAsc, lf("\n"), betaAsc]),
      /second armour block/,
    ],
    [
      "a BEGIN line with a trailing space",
      Buffer.concat([alphaAsc, armour(PUBLIC, BETA(), { begin: `-----BEGIN ${PUBLIC}----- ` })]),
      /trailing space|second armour block/,
    ],
    [
      "a BEGIN line with a trailing tab",
      Buffer.concat([alphaAsc, armour(PUBLIC, BETA(), { begin: `-----BEGIN ${PUBLIC}-----\t` })]),
      /second armour block/,
    ],
    [
      "a BEGIN line in lower case",
      Buffer.concat([alphaAsc, armour(PUBLIC, BETA(), { begin: "-----BEGIN pgp public key block-----" })]),
      /second armour block/,
    ],
    [
      "an END line with a trailing space, then a second block",
      lf(`${alphaAsc.toString("latin1").replace(/-----\n$/, "----- \n")}${betaAsc.toString("latin1")}`),
      /END/,
    ],
    [
      "the whole file in a block that only starts like the expected one",
      armour(PUBLIC, Buffer.concat([ALPHA(), BETA()]), { begin: `-----BEGIN ${PUBLIC}----- ` }),
      /trailing space/,
    ],
    ["binary packets after the armour", Buffer.concat([alphaAsc, BETA()]), /binary data after the armour/],
    [
      "binary packets after the armour, no line break",
      Buffer.concat([alphaAsc.subarray(0, alphaAsc.length - 1), BETA()]),
      /END|binary/,
    ],
    [
      "armour inside the armour",
      lf(alphaAsc.toString("latin1").replace(/\n=/, `\n${armour("PGP MESSAGE", BETA()).toString("latin1")}=`)),
      /"-----BEGIN PGP MESSAGE-----" inside the armour block/,
    ],
    [
      "text before the armour, then a second block",
      Buffer.concat([lf("Here is the key:\n"), alphaAsc, armour("PGP MESSAGE", BETA())]),
      /text before the armour/,
    ],
    [
      "text after the armour, then a second block",
      Buffer.concat([alphaAsc, lf("Thanks!\n"), armour("PGP MESSAGE", BETA())]),
      /text after the armour/,
    ],
    [
      "a comment line between two blocks",
      Buffer.concat([alphaAsc, lf("# the next one too\n"), betaAsc]),
      /text after the armour/,
    ],
    [
      "CRLF line ends and a second block",
      asCrlf(Buffer.concat([alphaAsc, armour("PGP MESSAGE", BETA())])),
      /-----BEGIN PGP MESSAGE-----/,
    ],
    [
      "a block with CR-only line ends after the armour",
      Buffer.concat([alphaAsc, lf(armour("PGP MESSAGE", BETA()).toString("latin1").replace(/\n/g, "\r"))]),
      /text after the armour|MESSAGE/,
    ],
    ["binary keyring + appended armour", Buffer.concat([ALPHA(), betaAsc]), /armour after the binary packets/],
    [
      "binary keyring + appended armour of another type",
      Buffer.concat([ALPHA(), armour("PGP MESSAGE", BETA())]),
      /armour after the binary packets/,
    ],
    [
      "a second primary key in the binary (old-format header)",
      Buffer.concat([ALPHA(), BETA()]),
      /not the expected key/,
    ],
    [
      "a second primary key in the binary between alpha's user ID and its subkey (new-format, five-octet length)",
      Buffer.concat([
        ...split(ALPHA())
          .slice(0, 3)
          .map(([t, b]) => newFormat(t, b)),
        ...split(BETA()).map(([t, b]) => newFormat(t, b, true)),
        ...split(ALPHA())
          .slice(3)
          .map(([t, b]) => newFormat(t, b)),
      ]),
      /not the expected key/,
    ],
    [
      "a second primary key inside the armour",
      armour(PUBLIC, Buffer.concat([ALPHA(), BETA()])),
      /not the expected key/,
    ],
    [
      "a second block whose headers hide its blank line",
      Buffer.concat([
        alphaAsc,
        armour("PGP MESSAGE", BETA(), { headers: ["Version: 1", "Comment: looks like a header"] }),
      ]),
      /-----BEGIN PGP MESSAGE-----/,
    ],
    [
      "a key's base64 spread over an extra blank line",
      lf(
        `${alphaAsc.toString("latin1").replace(/\n=/, `\n\n${betaAsc.toString("latin1").split("\n\n")[1].split("\n=")[0]}\n=`)}`,
      ),
      /blank line inside/,
    ],
    [
      "the expected body twice, the second time as a signature block",
      Buffer.concat([
        alphaAsc,
        lf(`-----BEGIN PGP SIGNATURE-----\n\n${alphaBody}\n-----END PGP SIGNATURE-----\n`),
        armour("PGP SIGNATURE", BETA()),
      ]),
      /SIGNATURE/,
    ],
  ];
}
