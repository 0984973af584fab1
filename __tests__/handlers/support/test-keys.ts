// The SSH keys the unit tests use: fixed, committed, test-only (__tests__/fixtures/keys/README.md says
// why). Every test that needs a key takes it from here, never from ssh2's generator, which now and then
// writes a key it cannot read back.

import * as fs from "node:fs";
import * as path from "node:path";

const KEYS_DIR = path.resolve(__dirname, "..", "..", "fixtures", "keys");

export interface TestKey {
  /** OpenSSH private key text, as ssh-keygen writes it. */
  readonly private: string;
  /** The authorized_keys line: type, base64 blob, comment. */
  readonly public: string;
  /** "SHA256:..." as `ssh-keygen -lf <file>.pub` prints it, recorded when the key was made. */
  readonly sha256: string;
}

const FINGERPRINTS = {
  /** The key the tests' client logs in with. */
  client_ed25519: "SHA256:FovyCyDikvASy15vk8m2jn9e845fn5/WAKvJ/ucU/Dg",
  /** A second client key, for "the server does not accept this key". */
  other_ed25519: "SHA256:ROkeH+dna9Gh10YZON4ZEt29tSgdEVQ4nEaWCeFnMkk",
  /** The in-process SSH server's host key. */
  host_ed25519: "SHA256:qRiXGthETuuViY4aJcZUifOIZM/C0+R37/tNyY5t3e0",
  rsa: "SHA256:Tqn2Hguf0PFavWLUcgXbVBRgGxZiF2y6TS5k1GesL/o",
  ecdsa: "SHA256:c2HwhlDS/LtWtKtfsRA3QtiT8R4p1oy1599Kdk2lGWA",
  /** Encrypted with the passphrase ENCRYPTED_KEY_PASSPHRASE. */
  encrypted_ed25519: "SHA256:Q8s37WdxW0WeDb45sbxMQ4lMncYtdDCX1iA8SmWyEGk",
} as const;

export type TestKeyName = keyof typeof FINGERPRINTS;

export const TEST_KEY_NAMES = Object.keys(FINGERPRINTS) as TestKeyName[];

export const ENCRYPTED_KEY_PASSPHRASE = "pw";

const loaded = new Map<TestKeyName, TestKey>();

/** One of the committed test keys, read once per test file. */
export function testKey(name: TestKeyName): TestKey {
  let key = loaded.get(name);
  if (!key) {
    const file = path.join(KEYS_DIR, name);
    try {
      key = {
        private: fs.readFileSync(file, "utf8"),
        public: fs.readFileSync(`${file}.pub`, "utf8").trim(),
        sha256: FINGERPRINTS[name],
      };
    } catch (err) {
      throw new Error(
        `test key ${name}: cannot read ${file} or ${file}.pub (${(err as Error).message}); see ` +
          `__tests__/fixtures/keys/README.md to make it again`,
      );
    }
    loaded.set(name, key);
  }
  return key;
}
