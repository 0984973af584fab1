// Loaded in place of ssh2's lib/index.js inside handler bundles (see SSH2_REPLACEMENTS in ../bundle.ts),
// resolving from that file's folder. Handlers are SSH clients that parse keys, nothing more; the real
// index also pulls in ssh2's server, key generator and HTTP agents, about 26 KB of every bundle.
// An ES module on purpose: importing a name not exported here ("Server") fails the build, where a
// CommonJS stand-in would leave it undefined until a job ran. utils is checked by name at run time.
import Client from "./client.js";
import { parseKey } from "./protocol/keyParser.js";

const HERE = "lib/construct/bundling/stubs/ssh2-index.js";

// Only after the connection is up would a missing SFTP surface, as a throw inside ssh2's packet
// handling; failing at the call names the cause.
Client.prototype.sftp = function sftp() {
  throw new Error(
    `ssh2 SFTP is left out of handler bundles to keep them small (${HERE}); run commands over exec instead, ` +
      "or drop the SFTP entry from SSH2_REPLACEMENTS in lib/construct/bundling/bundle.ts",
  );
};

const utilsExported = { parseKey };
const utils = new Proxy(utilsExported, {
  get(target, prop) {
    // Symbols and the names runtimes probe (util.inspect, await) are not calls into ssh2.
    if (typeof prop !== "string" || prop in target || prop === "then" || prop === "toJSON") return target[prop];
    throw new Error(
      `ssh2 utils.${prop} is not in the handler bundle: ${HERE} lists what handlers may use from ssh2; ` +
        "export it there and rerun __tests__/bundle.test.ts (bundle size limit)",
    );
  },
});

export { Client, utils };
