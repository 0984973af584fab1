// install-docker-daemon.test.ts again, on Debian 13 (dockerd 26): the reload's journal line, the http://
// mirror without insecure-registries, and the mirror taken back, on the dockerd trixie ships (~70 s).
process.env.VM_INSTALL_SANDBOX_RELEASE = "trixie";
require("../install-docker-daemon.test");
