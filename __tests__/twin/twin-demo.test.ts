// `npm run demo -- --twin` deploys the production shape: the defaults a real deploy uses (kind nubes,
// jobTarget sless), one VM, every installer; its synth has the resources a real deploy has.

import { twinDemoContext } from "../../dev/demo/twin-demo";
import { parseConfig } from "../../lib/construct/config/parse";
import { synth } from "../support/synth";

describe("the twin demo's configuration", () => {
  test("is the production shape: one nubes VM, sless jobs, all three installers, delete on destroy", () => {
    const config = parseConfig(twinDemoContext());
    expect(config.jobTarget).toBe("sless");
    expect(config.nubes?.deleteMode).toBe("delete");
    expect(config.vms.map((vm) => vm.kind)).toEqual(["nubes"]);
    expect(Object.values(config.vms[0].installers).map((i) => i.enabled)).toEqual([true, true, true]);
  });

  test("synthesizes the real resource types and outputs", () => {
    // Its key pair is made by the demo before it deploys; here the test's pair stands in (synth checks the files).
    const ctx = twinDemoContext();
    const { tf } = synth({ ...ctx, vms: ctx.vms.map(({ privateKeyPath, publicKeyPath, ...vm }) => vm) });
    expect(Object.keys(tf.resource).sort()).toEqual(["nubes_vapp", "nubes_vc_vm_v3", "sless_job", "terraform_data"]);
    expect(Object.keys(tf.output).sort()).toEqual([
      "demo_address",
      "demo_docker_result",
      "demo_host_key_sha256",
      "demo_packages_result",
      "demo_postgres_result",
    ]);
  });
});
