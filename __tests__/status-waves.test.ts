// npm run status for a rollout in waves: rows wave by wave, and the VMs of waves a stopped rollout never
// started marked "not reached" (a VM of a reached wave that has no result is "not run", as before).
import { parseConfig } from "../lib/construct/config/parse";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { statusRows } from "../lib/operator/status/status-rows";
import { renderStatusTable } from "../lib/operator/status/status-table";

const packages = INSTALLERS.filter((d) => d.key === "packages");
const ok = JSON.stringify({ status: "ok", changed: true, summary: "installed 1 package (jq)" });
const hosts = (waves: number[]) =>
  waves.map((wave, i) => ({ name: `h${i + 1}`, kind: "existing", address: `192.0.2.${i + 1}`, wave }));
const config = parseConfig({ jobTarget: "local", vms: hosts([2, 1, 3, 2]) });

describe("status of a rollout in waves", () => {
  test("rows come wave by wave, each with its wave", () => {
    const rows = statusRows(config, {}, { catalog: packages });
    expect(rows.map((r) => [r.wave, r.vm])).toEqual([
      [1, "h2"],
      [2, "h1"],
      [2, "h4"],
      [3, "h3"],
    ]);
  });

  test("stopped at wave 1: the later waves are not reached; the canary's own row says what it says", () => {
    const failed = { phase: "Failed", message: "apt: no such package", finishedAt: "2026-12-04T05:00:00.000Z" };
    const state = new Set(["terraform_data.h2_packages"]);
    const rows = statusRows(
      config,
      {},
      { catalog: packages, state, local: (job) => (job.startsWith("h2-") ? failed : undefined) },
    );
    expect(rows.map((r) => [r.vm, r.status])).toEqual([
      ["h2", "failed"],
      ["h1", "not reached"],
      ["h4", "not reached"],
      ["h3", "not reached"],
    ]);
    expect(rows[1].summary).toMatch(/^the rollout stopped before wave 2: wave 1 did not pass its gate/);
  });

  test("past wave 1's gate, stopped at wave 2: wave 2's VMs have results or are not run, wave 3 not reached", () => {
    const state = new Set([
      "terraform_data.h2_packages",
      "terraform_data.rollout_wave_1",
      "terraform_data.h1_packages",
    ]);
    const outputs = { h2_packages_result: ok, h1_packages_result: ok };
    const rows = statusRows(config, outputs, { catalog: packages, state });
    expect(rows.map((r) => [r.vm, r.status])).toEqual([
      ["h2", "ok"],
      ["h1", "ok"],
      ["h4", "not run"],
      ["h3", "not reached"],
    ]);
  });

  test("the table shows the wave first; a fleet in one wave keeps today's columns", () => {
    const table = renderStatusTable(statusRows(config, {}, { catalog: packages }), false);
    expect(table.split("\n")[0]).toMatch(/^WAVE +VM +INSTALLER +STATUS/);
    const single = parseConfig({ jobTarget: "local", vms: hosts([1, 1]).map(({ wave: _, ...h }) => h) });
    const rows = statusRows(single, {}, { catalog: packages });
    expect(rows.every((r) => r.wave === undefined)).toBe(true);
    expect(renderStatusTable(rows, false).split("\n")[0]).toMatch(/^VM +INSTALLER +STATUS/);
  });
});
