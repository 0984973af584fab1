// An installer set to `enabled: false` after it was deployed is "skipped" in npm run status, as the stack's
// output says, not "not run": its job left the state, but the local target's last result file stays (the
// destroy-time step that would remove it is not run for a resource that left the configuration). Seen
// following the README's quickstart: status said "install-docker has not run ...; npm run deploy runs it"
// and exited 2.
import { parseConfig } from "../lib/construct/config/parse";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { hostKeyIds, installerJobId, jobName, resultOutputName } from "../lib/construct/resource-names";
import { statusRows } from "../lib/operator/status/status-rows";

const KEY = `SHA256:${"a".repeat(43)}`;
const at = "2026-12-05T10:00:00.000Z";
const ok = (handler: string) =>
  JSON.stringify({ status: "ok", changed: false, summary: `${handler} ok`, host_key_sha256: KEY });

describe.each(["local", "sless"] as const)("an installer disabled after a deploy (%s target)", (jobTarget) => {
  it.each(INSTALLERS.map((def) => [def.handler, def] as const))("%s is skipped, the others ok", (_name, off) => {
    const config = parseConfig({
      jobTarget,
      installers: Object.fromEntries(
        INSTALLERS.map((def) => [
          def.key,
          def.key === "postgres" ? { enabled: def !== off, passwordVariable: "pg_password" } : { enabled: def !== off },
        ]),
      ),
      vms: [{ name: "db", kind: "existing", address: "192.0.2.1" }],
    });
    const jobType = jobTarget === "sless" ? "sless_job" : "terraform_data";
    const on = INSTALLERS.filter((def) => def !== off);
    const state = new Set([
      `terraform_data.${hostKeyIds("db").record}`,
      ...on.map((def) => `${jobType}.${installerJobId("db", def.key)}`),
    ]);
    const outputs: Record<string, string> = {
      [hostKeyIds("db").output]: KEY,
      ...Object.fromEntries(
        INSTALLERS.map((def) => [resultOutputName("db", def.key), def === off ? "skipped" : ok(def.handler)]),
      ),
    };
    // Every job's last result file, the disabled one's included (left from its last run).
    const local =
      jobTarget === "local"
        ? (job: string) => {
            const def = INSTALLERS.find((d) => jobName("db", d.handler) === job);
            return def && { phase: "Succeeded", message: ok(def.handler), finishedAt: at };
          }
        : undefined;
    const rows = statusRows(config, outputs, { state, local });
    expect(rows.map((r) => [r.installer, r.status])).toEqual(
      INSTALLERS.map((def) => [def.handler, def === off ? "skipped" : "ok"]),
    );
    expect(rows.find((r) => r.installer === off.handler)?.summary).toBe("disabled in cdktf.json");
  });
});
