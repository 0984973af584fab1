// SASLprep (RFC 4013) as PostgreSQL applies it to a password before SCRAM hashing (src/common/saslprep.c, the
// same code in the server and in libpq), through @mongodb-js/saslprep, whose tables are RFC 3454's (Unicode
// 3.2) as PostgreSQL's are. PostgreSQL differs from the RFC, and so from the library, in three ways: a pure ASCII
// password is copied as it is (controls too), a failure of any kind hashes the password as it is, and the
// prohibited, unassigned and bidi checks run on the mapped string before NFKC, not after.
import saslprep from "@mongodb-js/saslprep";

// biome-ignore lint/suspicious/noControlCharactersInRegex: pg_is_ascii takes the whole 7-bit range, controls included.
const ASCII = /^[\x00-\x7f]*$/;

/** Either the library's result, or why it refused. */
function prepared(text: string): string | undefined {
  try {
    return saslprep(text);
  } catch {
    return undefined;
  }
}

/**
 * SASLprep's first step for one character, by the library: " " for a non-ASCII space (RFC 3454 C.1.2), "" for a
 * character mapped to nothing (B.1), the character otherwise. Asked with an "a" after it (the library throws on
 * an empty result): NFKC never drops a character and no character composes with a following "a", so only B.1
 * comes back as "a" and only C.1.2 as " a" (the test checks every code point: no other one's NFKC is a space).
 */
function mapped(ch: string): string {
  if (ASCII.test(ch)) return ch;
  const out = prepared(`${ch}a`);
  return out === "a" ? "" : out === " a" ? " " : ch;
}

/**
 * What PostgreSQL may hash for `password`: one string when that is certain, else the two it could be, the
 * library's verdict first. Certain for ASCII, for a password mapped to nothing at all (refused: hashed as it
 * is), and whenever the mapped password is already NFKC: both sides then check the same string against the
 * same tables. Where NFKC changes it (compatibility characters such as U+2168 or U+FB01, or decomposed accents),
 * PostgreSQL checks the string before NFKC and the library after, and the verdicts can differ (U+0340/U+0341,
 * characters Unicode 3.2 lacked that decompose into ones it had, right-to-left text whose first or last
 * character NFKC changes): PostgreSQL's is then the normalized string or the password as it is, and both come.
 */
export function postgresSaslprep(password: string): readonly [string] | readonly [string, string] {
  if (ASCII.test(password)) return [password];
  const map = Array.from(password, mapped).join("");
  if (map === "") return [password];
  const library = prepared(password);
  const normalized = map.normalize("NFKC");
  if (normalized === map) return [library ?? password];
  return library === undefined ? [password, normalized] : [library, password];
}
