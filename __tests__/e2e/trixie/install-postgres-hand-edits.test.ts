// install-postgres-hand-edits.test.ts again, on Debian 13: every sandbox of the suite boots the trixie image,
// and the expectations that depend on the release follow it (../support/release.ts).
process.env.VM_INSTALL_SANDBOX_RELEASE = "trixie";
require("../install-postgres-hand-edits.test");
