// Loaded in place of ssh2's lib/protocol/SFTP.js inside handler bundles (see SSH2_REPLACEMENTS in
// ../bundle.ts): 50 KB that handlers never run, since they only exec commands. ssh2's client requires the
// SFTP class at load time and constructs it only for an SFTP channel, which ssh2-index.js refuses to open;
// utils.js compares a channel's constructor with it, which stays false for every exec channel.

class SFTP {
  constructor() {
    throw new Error(
      "ssh2 SFTP is left out of handler bundles (lib/construct/bundling/stubs/ssh2-sftp.js); " +
        "run commands over exec instead",
    );
  }
}

module.exports = { SFTP };
