// npm run status's rows and table, from plain outputs (the deployed-state side is in the deploy e2e).
import { parseConfig } from "../lib/construct/config/parse";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { statusRow, statusRows } from "../lib/operator/status/status-rows";
import { renderStatusTable } from "../lib/operator/status/status-table";
import { HOSTILE, hostileResult, NOT_ONE_PRINTABLE_LINE, OWN_COLOURS, stringsIn } from "./support/vm-says";

const packages = INSTALLERS.find((d) => d.key === "packages")!;
const ok = JSON.stringify({
  status: "ok",
  changed: true,
  changes: ["installed jq"],
  summary: "installed 1 package (jq)",
  host_key_sha256: `SHA256:${"k".repeat(43)}`,
  timings_ms: { total: 2345 },
});

describe("status rows", () => {
  test("a result, a disabled installer, one not run, a sless failure's text, a local failure newer than the outputs", () => {
    expect(statusRow("vm1", packages, ok)).toEqual({
      vm: "vm1",
      installer: "install-packages",
      status: "ok",
      changed: true,
      summary: "installed 1 package (jq)",
      durationMs: 2345,
      hostKey: `SHA256:${"k".repeat(43)}`,
      lastRun: undefined,
      log: undefined,
    });
    expect(statusRow("vm1", packages, "skipped")).toMatchObject({
      status: "skipped",
      summary: "disabled in cdktf.json",
    });
    expect(statusRow("vm1", packages, undefined)).toMatchObject({ status: "not run", summary: "" });
    expect(statusRow("vm1", packages, "not run")).toMatchObject({ status: "not run" });
    expect(
      statusRow("vm1", packages, "install-packages failed: no-such-pkg: no installation candidate\nmore"),
    ).toMatchObject({
      status: "failed",
      summary: "install-packages failed: no-such-pkg: no installation candidate",
    });
    // The outputs still hold the previous success; the runner's record says the last run failed.
    const local = {
      phase: "Failed",
      message: "boom",
      finishedAt: "2026-12-03T08:00:00.000Z",
      log: ".vm-install/s/logs/x.log",
    };
    expect(statusRow("vm1", packages, ok, local)).toMatchObject({
      status: "failed",
      summary: "boom",
      lastRun: local.finishedAt,
      log: local.log,
    });
  });

  test("every VM x installer, in config and catalog order, from the outputs the stack names", () => {
    const config = parseConfig({
      installers: { docker: { enabled: true } },
      vms: [
        { name: "web-1", kind: "existing", address: "192.0.2.1" },
        { name: "db", kind: "existing", address: "192.0.2.2" },
      ],
    });
    const rows = statusRows(config, {
      web_1_packages_result: ok,
      web_1_postgres_result: "skipped",
      db_packages_result: ok,
    });
    expect(rows.map((r) => [r.vm, r.installer, r.status])).toEqual([
      ["web-1", "install-packages", "ok"],
      ["web-1", "install-docker", "not run"],
      ["web-1", "install-postgres", "skipped"],
      ["db", "install-packages", "ok"],
      ["db", "install-docker", "not run"],
      ["db", "install-postgres", "not run"],
    ]);
  });
});

// Terraform keeps an output's last value when an apply fails before the output is evaluated again: after a
// VM is replaced (or deleted outside Terraform, which refresh notices) and the deploy stops before a job
// has run on the new VM, the outputs still hold the old VM's results. The state says which VM and which
// jobs exist now; a result is shown only when its job is there, for a VM that is there.
describe("status rows never show an old VM's results for a new VM", () => {
  const nubes = parseConfig({ nubes: { vdcUid: "v", nsxtUid: "n" }, vms: [{ name: "web-1" }] });
  const outputs = { web_1_packages_result: ok, web_1_docker_result: "skipped", web_1_postgres_result: "skipped" };
  const deployed = [
    "nubes_vapp.web_1_vapp",
    "nubes_vc_vm_v3.web_1_vm",
    "terraform_data.web_1_host_key",
    "sless_job.web_1_host_key_probe",
    "sless_job.web_1_packages",
  ];

  test("the VM and its job in the state: the result is shown", () => {
    expect(statusRows(nubes, outputs, { state: new Set(deployed) })[0]).toMatchObject({
      status: "ok",
      hostKey: `SHA256:${"k".repeat(43)}`,
    });
  });

  test("the job is not in the state (destroyed with the old VM, not run on the new one): not run, whatever the outputs say", () => {
    const rows = statusRows(nubes, outputs, {
      state: new Set(deployed.filter((a) => a !== "sless_job.web_1_packages")),
    });
    expect(rows[0].status).toBe("not run");
    expect(rows[0].hostKey).toBeUndefined();
    expect(rows[0].summary).toMatch(/has not run on the current VM/);
    expect(rows.slice(1).map((r) => r.status)).toEqual(["skipped", "skipped"]);
  });

  test("the VM is not in the state (deleted outside Terraform, or its re-creation failed): not run", () => {
    const rows = statusRows(nubes, outputs, {
      state: new Set(deployed.filter((a) => !a.startsWith("nubes_vc_vm_v3."))),
    });
    expect(rows[0].status).toBe("not run");
    expect(rows[0].hostKey).toBeUndefined();
    expect(rows[0].summary).toMatch(/web-1 is not in the Terraform state/);
  });

  test("nothing deployed yet (an empty state): plain not run, no talk of an earlier VM", () => {
    const rows = statusRows(nubes, {}, { state: new Set() });
    expect(rows.map((r) => [r.status, r.summary])).toEqual([
      ["not run", ""],
      ["not run", ""],
      ["not run", ""],
    ]);
  });

  test("local target: the job's own result file does not speak for a job that is not in the state", () => {
    const local = parseConfig({ jobTarget: "local", nubes: { vdcUid: "v", nsxtUid: "n" }, vms: [{ name: "web-1" }] });
    const record = { phase: "Succeeded", message: ok, finishedAt: "2026-12-03T08:00:00.000Z" };
    const state = new Set(["nubes_vc_vm_v3.web_1_vm", "terraform_data.web_1_packages"]);
    expect(statusRows(local, outputs, { state, local: () => record })[0]).toMatchObject({ status: "ok" });
    state.delete("terraform_data.web_1_packages");
    expect(statusRows(local, outputs, { state, local: () => record })[0]).toMatchObject({ status: "not run" });
  });
});

describe("status table", () => {
  const rows = [statusRow("vm1", packages, ok), statusRow("vm2", packages, "skipped")];

  test("plain when piped: aligned columns, no escape codes", () => {
    expect(renderStatusTable(rows, false).split("\n")).toEqual([
      "VM   INSTALLER         STATUS   CHANGED  DURATION  LAST RUN  HOST KEY                SUMMARY",
      "vm1  install-packages  ok       yes      2.3s      -         SHA256:kkkkkkkkkkkk...  installed 1 package (jq)",
      "vm2  install-packages  skipped  -        -         -         -                       disabled in cdktf.json",
    ]);
  });

  test("coloured on a terminal: the status by its meaning, the heading bold", () => {
    const text = renderStatusTable(rows, true);
    expect(text).toContain("\x1b[32mok     \x1b[0m");
    expect(text).toContain("\x1b[1mVM \x1b[0m");
    expect(text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "")).toBe(
      renderStatusTable(rows, false),
    );
  });

  test("logs, when the local target kept them, are listed under the table", () => {
    const withLog = [{ ...rows[0], log: ".vm-install/s/logs/vm1-install-packages-20261203T080000000Z.log" }];
    expect(renderStatusTable(withLog, false)).toMatch(
      /\n\nlast run's full progress:\n {2}vm1 install-packages: \.vm-install\/s\/logs\/vm1-install-packages-20261203T080000000Z\.log$/,
    );
  });
});

// A job message is the VM's word (or an older job's, or a forged record in the state): each of its texts
// reaches a cell as one printable line, a line break shown as ⏎, so no text adds a row or moves the cursor.
describe("what the VM says is data in the status table, not layout", () => {
  const config = parseConfig({
    jobTarget: "local",
    installers: { docker: { enabled: true } },
    vms: [
      { name: "web-1", kind: "existing", address: "192.0.2.1" },
      { name: "db", kind: "existing", address: "192.0.2.2" },
    ],
  });
  const outputs = {
    web_1_packages_result: hostileResult(),
    web_1_docker_result: `install-docker failed: ${HOSTILE}`, // a sless job's error text
    web_1_postgres_result: "skipped",
    db_packages_result: hostileResult({ status: "partial" }),
  };
  const local = (job: string) =>
    job === "db-install-docker" ? { phase: "Failed", message: HOSTILE, finishedAt: HOSTILE, log: HOSTILE } : undefined;
  const rows = statusRows(config, outputs, { local });

  test("every text of every row (what --json prints) is one printable line", () => {
    expect(rows.map((r) => [r.vm, r.installer, r.status])).toEqual([
      ["web-1", "install-packages", "ok"],
      ["web-1", "install-docker", "failed"],
      ["web-1", "install-postgres", "skipped"],
      ["db", "install-packages", "partial"],
      ["db", "install-docker", "failed"],
      ["db", "install-postgres", "not run"],
    ]);
    for (const text of stringsIn(rows)) expect(text).not.toMatch(NOT_ONE_PRINTABLE_LINE);
    expect(rows[0].summary).toContain("24.0.5⏎vm2  install-docker  ok");
  });

  test("the table has a line per row, its log list a line per log, and no escape but its own colours", () => {
    const forged = rows.map((r) => ({ ...r, summary: HOSTILE, hostKey: HOSTILE, lastRun: HOSTILE }));
    for (const table of [renderStatusTable(rows, false), renderStatusTable(forged, false)]) {
      const lines = table.split("\n");
      expect(lines).toHaveLength(1 + 6 + 3);
      expect(lines.slice(1, 7).map((l) => l.split(" ")[0])).toEqual(["web-1", "web-1", "web-1", "db", "db", "db"]);
      expect(lines.slice(7, 9)).toEqual(["", "last run's full progress:"]);
      for (const line of lines) expect(line).not.toMatch(NOT_ONE_PRINTABLE_LINE);
    }
    const coloured = renderStatusTable(forged, true).replace(OWN_COLOURS, "");
    expect(coloured).toBe(renderStatusTable(forged, false));
  });
});
