// ASCII armour (RFC 4880 6.2), read two ways: strictly, for the key that is checked and rebuilt, and the
// way apt reads an .asc keyring, only to name what a refused file would have made apt trust.

// Strict means one PUBLIC KEY BLOCK and nothing else: apt's own reader (apt-key's dearmor_keyring, an awk
// script) decodes every block whose line starts with "-----BEGIN", of any type, whitespace after it
// ignored, and concatenates them, so any second block, any text or binary around the armour, any line
// this reader cannot place is a refusal naming it rather than something skipped. Allowed, because each
// is accounted for: blank lines around the block, LF or CRLF line ends, the Version/Comment/Charset
// headers, a missing checksum (RFC 9580 makes it optional). Nothing read here is ever written: the
// keyring apt gets is rebuilt from the decoded packets (./openpgp.ts).
export class OpenPgpError extends Error {
  /** Primary keys (v4 fingerprints) found anywhere in a refused file, for the message a person reads. */
  hiddenKeys: string[] = [];
}

const BEGIN = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
const END = "-----END PGP PUBLIC KEY BLOCK-----";
/** The headers gpg and other OpenPGP tools write into a key block; anything else is not a key file's. */
const HEADERS = new Set(["version", "comment", "charset"]);
const BASE64_LINE = /^[A-Za-z0-9+/]+={0,2}$/;
const CHECKSUM_LINE = /^=[A-Za-z0-9+/]{4}$/;

/**
 * True when `file` is to be read as armour: its first byte is text (a binary key starts with a packet
 * header, high bit set).
 */
export function looksArmoured(file: Buffer): boolean {
  return file.length > 0 && (file[0] & 0x80) === 0;
}

interface Line {
  text: string;
  /** 1-based, for messages. */
  number: number;
}

/** The file's lines, each without its LF and one CR before it (CRLF files read like LF ones). */
function lines(text: string): Line[] {
  const parts = text.split("\n");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts.map((l, i) => ({ text: l.endsWith("\r") ? l.slice(0, -1) : l, number: i + 1 }));
}

/** A line as a message shows it: quoted, escaped, cut short. */
function shown(line: string): string {
  const cut = line.length > 60 ? `${line.slice(0, 60)}...` : line;
  return JSON.stringify(cut).replace(/[\x80-\uffff]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** What a line outside the one block is, worded for the refusal. */
function outside(line: Line, where: "before" | "after"): string {
  if (/^\s*-----BEGIN/i.test(line.text)) {
    return where === "before"
      ? `line ${line.number} is ${shown(line.text)}, not exactly ${BEGIN} (a key file is one such block and nothing ` +
          `else)`
      : `a second armour block, ${shown(line.text)} at line ${line.number}: a key file is one ${BEGIN} block and ` +
          `nothing else`;
  }
  if (/[^\x20-\x7e\t]/.test(line.text))
    return `binary data ${where} the armour (line ${line.number}): a key file is one armour block and nothing else`;
  return (
    `text ${where} the armour at line ${line.number} (${shown(line.text)}): a key file is one armour block and ` +
    `nothing else`
  );
}

/** Why a line does not belong where it is inside the block, or undefined when it is base64. */
function misplaced(line: Line): string | undefined {
  if (line.text.startsWith("-----")) return `${shown(line.text)} inside the armour block at line ${line.number}`;
  if (line.text === "") return `a blank line inside the armour block's data at line ${line.number}`;
  if (/\s$/.test(line.text)) return `line ${line.number} of the armour block ends in white space`;
  if (!BASE64_LINE.test(line.text))
    return `line ${line.number} of the armour block is not base64 (${shown(line.text)})`;
  return undefined;
}

/**
 * The packets of the file's one PUBLIC KEY BLOCK, or an OpenPgpError naming the first thing that is not
 * part of it or not well-formed. The data must be canonical base64 and match its checksum when it has one.
 */
export function dearmor(file: Buffer | string): Buffer {
  const text = typeof file === "string" ? file : file.toString("latin1");
  const all = lines(text);
  let at = all.findIndex((l) => l.text !== "");
  if (at < 0) throw new OpenPgpError("it is empty");
  if (!all.some((l) => /^\s*-----BEGIN/i.test(l.text))) {
    throw new OpenPgpError(
      `it is neither OpenPGP packets nor an armour block (line ${all[at].number}: ${shown(all[at].text)})`,
    );
  }
  if (all[at].text !== BEGIN) {
    const trailing = all[at].text.startsWith(BEGIN)
      ? ` (it ends in ${JSON.stringify(all[at].text.slice(BEGIN.length))}: trailing space or other text)`
      : "";
    throw new OpenPgpError(`${outside(all[at], "before")}${trailing}`);
  }
  // Headers up to the blank line that RFC 4880 requires even when there are none.
  for (at++; at < all.length && all[at].text !== ""; at++) {
    const header = /^([A-Za-z][A-Za-z0-9-]*): (.*)$/.exec(all[at].text);
    if (all[at].text.startsWith("-----"))
      throw new OpenPgpError(`${shown(all[at].text)} inside the armour block at line ${all[at].number}`);
    if (!header)
      throw new OpenPgpError(
        `line ${all[at].number} of the armour block is neither a header nor the blank line that must end the headers`,
      );
    if (!HEADERS.has(header[1].toLowerCase()))
      throw new OpenPgpError(
        `the armour header ${JSON.stringify(header[1])} (line ${all[at].number}) is not one a key block has`,
      );
  }
  const data: string[] = [];
  let checksum: string | undefined;
  for (at++; at < all.length && all[at].text !== END; at++) {
    const line = all[at];
    if (checksum !== undefined)
      throw new OpenPgpError(
        `line ${line.number} (${shown(line.text)}) comes after the armour checksum, where exactly ${END} must be`,
      );
    if (CHECKSUM_LINE.test(line.text)) checksum = line.text.slice(1);
    else {
      const problem = misplaced(line);
      if (problem)
        throw new OpenPgpError(
          line.text.startsWith("=")
            ? `the armour checksum at line ${line.number} is not "=" and 4 base64 digits`
            : problem,
        );
      data.push(line.text);
    }
  }
  if (at >= all.length) throw new OpenPgpError(`the armour block has no ${END} line`);
  const extra = all.slice(at + 1).find((l) => l.text !== "");
  if (extra) throw new OpenPgpError(outside(extra, "after"));
  return decode(data, checksum);
}

function decode(data: string[], checksum: string | undefined): Buffer {
  const b64 = data.join("");
  const padded = data.slice(0, -1).some((l) => l.includes("="));
  const packets = Buffer.from(b64, "base64");
  if (padded || b64.length % 4 !== 0 || packets.toString("base64") !== b64) {
    throw new OpenPgpError(
      "the armour block's data is not canonical base64 (padding inside it, or a length that is not a multiple of 4)",
    );
  }
  if (checksum !== undefined && Buffer.from(checksum, "base64").readUIntBE(0, 3) !== crc24(packets)) {
    throw new OpenPgpError("the armour checksum does not match its contents (damaged or altered)");
  }
  return packets;
}

/** CRC-24 of RFC 4880 6.1, the armour checksum. */
function crc24(data: Buffer): number {
  let crc = 0xb704ce;
  for (const byte of data) {
    crc ^= byte << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
  }
  return crc & 0xffffff;
}

/**
 * What apt-key's dearmor_keyring would decode from `file`, block by block: after any line starting with
 * "-----BEGIN" and the first empty line that follows, every line not starting with "=" or "-", until a
 * line starting with "-----END". Lenient by design; only used to name keys in a file already refused.
 */
export function aptArmourBlocks(file: Buffer): Buffer[] {
  const runs: string[][] = [];
  let state: "out" | "headers" | "data" = "out";
  let current: string[] = [];
  // Decoded run by run (a run ends at a BEGIN, END or blank line), so one damaged run cannot hide the next.
  const flush = () => {
    if (current.length) runs.push(current);
    current = [];
  };
  for (const line of file.toString("latin1").split(/\r?\n|\r/)) {
    if (line.startsWith("-----BEGIN")) {
      flush();
      state = "headers";
    } else if (line.trim() === "") {
      flush();
      if (state === "headers") state = "data";
    } else if (state === "data" && /^[^=-]/.test(line)) current.push(line.trim());
    if (line.startsWith("-----END")) {
      flush();
      state = "out";
    }
  }
  flush();
  return runs.map((run) => Buffer.from(run.join(""), "base64"));
}
