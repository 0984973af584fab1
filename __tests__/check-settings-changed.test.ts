// npm run check tells drift a plain deploy puts back (the installer's settings changed in cdktf.json since
// the last deploy, so its job reruns) from drift only a rerun does (nothing changed, a deploy reruns nothing),
// by the event each job was deployed with, as the state keeps it (issue 33 item 4).
import { parseConfig } from "../lib/construct/config/parse";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { installerEvent } from "../lib/construct/installers/installer-event";
import { renderDriftTable } from "../lib/operator/check/drift-table";
import type { DriftRow } from "../lib/operator/check/run-checks";
import { settingsChanged } from "../lib/operator/check/settings-changed";
import { synth } from "./support/synth";

/** What `terraform show -json` gives for a deployed stack: its resources' values as synthesized (rendered). */
function shown(
  tf: Record<string, any>,
  render: (values: Record<string, unknown>) => Record<string, unknown> = (v) => v,
) {
  const resources = Object.entries<Record<string, any>>(tf.resource).flatMap(([type, byName]) =>
    Object.entries(byName).map(([name, values]) => ({ address: `${type}.${name}`, values: render(values) })),
  );
  return { values: { root_module: { resources } } };
}

const hosts = (packages: string[]) => ({
  jobTarget: "local",
  installers: { packages: { packages }, docker: { enabled: true, channel: "distro" } },
  vms: [
    { name: "web", kind: "existing", address: "192.0.2.1" },
    { name: "db", kind: "existing", address: "192.0.2.2" },
  ],
});
const drift = (vm: string, installer: string): DriftRow => ({
  vm,
  installer,
  state: "drift",
  wouldChange: ["x"],
  summary: "",
  warnings: [],
});

describe("settings changed since the last deploy", () => {
  const deployed = shown(synth(hosts(["git"])).tf);

  test("local target: the same cdktf.json changes nothing; an edited setting names its VM and installer", () => {
    expect(settingsChanged(parseConfig(hosts(["git"])), deployed)).toEqual(new Set());
    const edited = parseConfig({
      ...hosts(["git"]),
      vms: [{ ...hosts([]).vms[0], installers: { packages: { packages: ["jq"] } } }, hosts([]).vms[1]],
    });
    expect(settingsChanged(edited, deployed)).toEqual(new Set(["web install-packages"]));
  });

  test("the closing line: a deploy for the VM whose settings changed, a rerun for drift on the VM as it is", () => {
    const edited = parseConfig({
      ...hosts(["git"]),
      vms: [{ ...hosts([]).vms[0], installers: { packages: { packages: ["jq"] } } }, hosts([]).vms[1]],
    });
    const text = renderDriftTable(
      [drift("web", "install-packages"), drift("db", "install-docker")],
      false,
      settingsChanged(edited, deployed),
    );
    expect(text.split("\n").at(-1)).toBe(
      "drift: 2 of 2 installers would change something; to put it back: npm run rerun -- db install-docker; " +
        "npm run deploy (cdktf.json changed for web since the last deploy)",
    );
  });

  test("sless target: event_json as the state renders it, its secret left out of the comparison", () => {
    const ctx = {
      nubes: { vdcUid: "v", nsxtUid: "n" },
      installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
      vms: [{ name: "vm1", hostKeySha256: `SHA256:${"A".repeat(43)}` }],
    };
    const { tf } = synth(ctx);
    // The state holds the rendered event: jsonencode(merge(event, {db_password = var.pg_password})), keys sorted.
    const vm = parseConfig(ctx).vms[0];
    const postgres = INSTALLERS.find((d) => d.key === "postgres")!;
    const event: Record<string, unknown> = { ...installerEvent(vm, postgres, true), db_password: "a password, long" };
    const sorted = Object.fromEntries(
      Object.keys(event)
        .sort()
        .map((k) => [k, event[k]]),
    );
    const rendered = shown(tf, (v) =>
      v.name === "vm1-install-postgres" ? { ...v, event_json: JSON.stringify(sorted) } : v,
    );
    expect(settingsChanged(parseConfig(ctx), rendered)).toEqual(new Set());
    const edited = parseConfig({
      ...ctx,
      installers: { postgres: { enabled: true, passwordVariable: "pg_password", dbName: "other" } },
    });
    expect(settingsChanged(edited, rendered)).toEqual(new Set(["vm1 install-postgres"]));
  });

  test("a state that cannot be read: undefined, and the line names both commands", () => {
    expect(settingsChanged(parseConfig(hosts(["git"])), undefined)).toBeUndefined();
    expect(renderDriftTable([drift("web", "install-packages")], false, undefined)).toMatch(
      /npm run rerun -- web install-packages .*after an edit to cdktf.json not yet deployed: npm run deploy$/,
    );
  });
});
