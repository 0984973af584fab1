// npm run status says why an installer did not run from what happened: an installer before it on the VM
// failed, the VM was replaced (its host key changed), or the last deploy stopped before it; never "the VM
// was replaced" for a VM that was not (issue 33 item 4).
import { parseConfig } from "../lib/construct/config/parse";
import { statusRows } from "../lib/operator/status/status-rows";

const KEY_THEN = `SHA256:${"a".repeat(43)}`;
const KEY_NOW = `SHA256:${"b".repeat(43)}`;
const ok = (installer: string, key = KEY_THEN) =>
  JSON.stringify({ status: "ok", changed: false, summary: `${installer} ok`, host_key_sha256: key });
const config = parseConfig({
  jobTarget: "local",
  installers: { docker: { enabled: true }, postgres: { enabled: true, passwordVariable: "pg_password" } },
  vms: [{ name: "db", kind: "existing", address: "192.0.2.1" }],
});
const keyMissing =
  "vms[db].privateKeyPath (vm_key): /srv/app/vm_key does not exist; make it with ssh-keygen -t ed25519 -N '' -f /srv/app/vm_key";
const at = "2026-12-05T10:00:00.000Z";

describe("why an installer did not run", () => {
  test("an earlier installer failed: the later ones name it, whether they ran before (results kept) or never", () => {
    const state = new Set(["terraform_data.db_packages", "terraform_data.db_host_key"]);
    const outputs = { db_host_key_sha256: KEY_THEN };
    const records: Record<string, { phase: string; message: string; finishedAt: string }> = {
      "db-install-packages": { phase: "Failed", message: keyMissing, finishedAt: at },
      "db-install-docker": { phase: "Succeeded", message: ok("docker"), finishedAt: at },
    };
    const rows = statusRows(config, outputs, { state, local: (job) => records[job] });
    expect(rows.map((r) => [r.installer, r.status, r.summary])).toEqual([
      ["install-packages", "failed", keyMissing],
      [
        "install-docker",
        "not run",
        "not run: install-packages failed before it on db (see its row); once that is put right, npm run deploy runs both",
      ],
      [
        "install-postgres",
        "not run",
        "not run: install-packages failed before it on db (see its row); once that is put right, npm run deploy runs both",
      ],
    ]);
    for (const row of rows) expect(row.summary).not.toMatch(/replaced/);
  });

  test("the VM was replaced (the host key it reported is not the VM's now): said, with both keys", () => {
    const state = new Set(["terraform_data.db_host_key"]);
    const rows = statusRows(config, { db_host_key_sha256: KEY_NOW, db_packages_result: ok("packages") }, { state });
    expect(rows[0]).toMatchObject({ status: "not run" });
    expect(rows[0].summary).toBe(
      `install-packages has not run on the current VM: the VM was replaced since it last ran (host key ${KEY_THEN} ` +
        `then, ${KEY_NOW} now); npm run deploy runs it there`,
    );
  });

  test("the same VM, no failure before it: the last deploy stopped before it, and no talk of a replaced VM", () => {
    const state = new Set(["terraform_data.db_host_key"]);
    const rows = statusRows(config, { db_host_key_sha256: KEY_THEN, db_packages_result: ok("packages") }, { state });
    expect(rows[0].summary).toBe(
      "install-packages has not run on the current VM: its job is not in the Terraform state, so the last deploy " +
        "stopped before it (its output says why); npm run deploy runs it",
    );
  });
});
