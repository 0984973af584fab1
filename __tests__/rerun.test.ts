// npm run rerun's command line and the jobs it replaces: one VM's, or one installer's; never another VM's.

import { parseRerunArgs, RerunRefused, rerunTargets } from "../bin/rerun";
import { parseConfig } from "../lib/construct/config/parse";

const vms = [
  {
    name: "web-1",
    kind: "existing",
    address: "192.0.2.1",
    installers: { docker: { enabled: true, channel: "distro" } },
  },
  { name: "web-2", kind: "existing", address: "192.0.2.2" },
];
const local = parseConfig({ jobTarget: "local", vms });
const sless = parseConfig({ jobTarget: "sless", vms });

describe("npm run rerun", () => {
  test("arguments: the VM, an optional installer, then terraform apply options", () => {
    expect(parseRerunArgs(["web-1"])).toEqual({ vmName: "web-1", applyArgs: [] });
    expect(parseRerunArgs(["web-1", "-auto-approve"])).toEqual({ vmName: "web-1", applyArgs: ["-auto-approve"] });
    expect(parseRerunArgs(["web-1", "install-docker", "-auto-approve"])).toEqual({
      vmName: "web-1",
      installer: "install-docker",
      applyArgs: ["-auto-approve"],
    });
    expect(() => parseRerunArgs([])).toThrow(/^usage: npm run rerun -- <vm name>/);
    expect(() => parseRerunArgs(["-auto-approve"])).toThrow(RerunRefused);
  });

  test("a VM: every enabled installer's job of that VM, on either target", () => {
    expect(rerunTargets(local, { vmName: "web-1", applyArgs: [] })).toEqual([
      "terraform_data.web_1_packages",
      "terraform_data.web_1_docker",
    ]);
    expect(rerunTargets(sless, { vmName: "web-2", applyArgs: [] })).toEqual(["sless_job.web_2_packages"]);
  });

  test("one installer, by handler name or key", () => {
    for (const installer of ["install-docker", "docker"]) {
      expect(rerunTargets(local, { vmName: "web-1", installer, applyArgs: [] })).toEqual([
        "terraform_data.web_1_docker",
      ]);
    }
  });

  test("an unknown VM or an installer the VM does not run is refused, naming what there is", () => {
    expect(() => rerunTargets(local, { vmName: "web-3", applyArgs: [] })).toThrow(
      'no VM named "web-3" in cdktf.json; the VMs are web-1, web-2',
    );
    expect(() => rerunTargets(local, { vmName: "web-2", installer: "install-docker", applyArgs: [] })).toThrow(
      'web-2 has no enabled installer "install-docker"; its installers are install-packages',
    );
  });
});
