// Loaded in place of bcrypt-pbkdf inside handler bundles (see SSH2_REPLACEMENTS in ../bundle.ts): it and
// the tweetnacl it pulls in are 48 KB that only decrypt passphrase-protected OpenSSH keys. ssh2's
// keyParser calls pbkdf only when it is given a passphrase, and handlers never give one (a job cannot type
// it; handlers/common/ssh.ts refuses encrypted keys with its own message before connecting).

function pbkdf() {
  throw new Error(
    "decrypting a passphrase-protected SSH key is left out of handler bundles " +
      "(lib/construct/bundling/stubs/bcrypt-pbkdf.js); give an unencrypted key",
  );
}

module.exports = { pbkdf };
