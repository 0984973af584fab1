// An installer's own synth warnings come from its definition's `warnings` hook, under its key path, and
// only while it is enabled: lib/construct/risky-settings.ts names no installer.
import { parseConfig } from "../lib/construct/config/parse";
import { type CatalogEntry, INSTALLERS } from "../lib/construct/installers/catalog";
import { riskySettings } from "../lib/construct/risky-settings";
import { setting } from "../lib/shared/settings";
import { boolean } from "../lib/shared/validate";
import { context } from "./support/synth";

const fixture: CatalogEntry = {
  key: "fixture",
  handler: "install-fixture",
  doc: "a fixture",
  enabledByDefault: false,
  waitTimeoutSec: 60,
  settings: { loud: setting(boolean(), { default: false, doc: "Be loud." }) },
  warnings: (c) => (c.loud ? ["loud: true wakes the neighbours; leave it off"] : []),
  result: {},
};
const catalog = [...INSTALLERS, fixture];
const pinned = { name: "vm1", hostKeySha256: `SHA256:${"A".repeat(43)}` };

function warningsFor(fixtureSettings: Record<string, unknown>): string[] {
  const config = parseConfig(context({ vms: [pinned], installers: { fixture: fixtureSettings } }), catalog);
  return riskySettings(config.vms[0], config.nubes, catalog);
}

describe("an installer's warnings hook", () => {
  it("is named at synth under the VM and the installer's key, for an enabled installer only", () => {
    expect(warningsFor({ enabled: true, loud: true })).toEqual([
      "vms[vm1].installers.fixture.loud: true wakes the neighbours; leave it off",
    ]);
    expect(warningsFor({ enabled: false, loud: true })).toEqual([]);
    expect(warningsFor({ enabled: true })).toEqual([]);
  });

  it("postgres' open networks come from its own definition's hook", () => {
    const postgres = INSTALLERS.find((def) => def.key === "postgres");
    const settings = { allowRemote: true, allowedCidrs: ["10.0.0.0/8", "::/0"], dbName: "d", dbUser: "u" };
    expect(postgres?.warnings?.(settings)).toEqual([
      "allowedCidrs: ::/0 admits every address to database d as u (password only); list the networks your clients use",
    ]);
    expect(postgres?.warnings?.({ ...settings, allowRemote: false })).toEqual([]);
  });
});
