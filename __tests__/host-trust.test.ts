// Trust on first contact, as synthesized: a probe job that reads the host key without authenticating, a
// terraform_data that records its first report and ignores later ones, and installers that require the
// recorded key (or the pin, which replaces both). What Terraform then does with it is proven end to end in
// __tests__/e2e/host-trust.test.ts.
import { parseConfig } from "../lib/config/parse";
import { context, synth } from "./support/synth";

const pin = `SHA256:${"A".repeat(43)}`;
const RECORDED = "${terraform_data.vm1_host_key.output.sha256}";

describe("trust on first contact: the record in Terraform state", () => {
  const { tf } = synth(context({ installers: { docker: { enabled: true } } }));
  const jobs = tf.resource.sless_job;
  const record = tf.resource.terraform_data.vm1_host_key;

  test("the probe comes first, gets no private key and runs the host-key handler", () => {
    const probe = jobs.vm1_host_key_probe;
    expect(probe.name).toBe("vm1-host-key");
    expect(probe.source_dir).toMatch(/handler-host-key/);
    expect(Object.keys(probe.env_vars).sort()).toEqual(["SSH_PORT", "SSH_USER", "VM_IP"]);
    expect(probe.wait_timeout_sec).toBe(180); // the SSH budget (120 s) and a minute to start
  });

  test("the record keeps the probe's first report: later reports are ignored, a new VM resets it", () => {
    expect(record.input).toEqual({ sha256: "${jsondecode(sless_job.vm1_host_key_probe.message).host_key_sha256}" });
    expect(record.lifecycle.ignore_changes).toEqual(["input"]);
    expect(record.lifecycle.replace_triggered_by).toEqual(["nubes_vc_vm_v3.vm1_vm.id"]);
    // Fails closed: a report without a fingerprint stops the deploy rather than recording nothing (which
    // the handlers would read as "no pin").
    expect(record.lifecycle.postcondition[0].condition).toBe('${can(regex("^SHA256:[A-Za-z0-9+/]{43}$", self.output.sha256))}');
  });

  test("every installer job requires the recorded key", () => {
    expect(jobs.vm1_packages.env_vars.SSH_HOST_KEY_SHA256).toBe(RECORDED);
    expect(jobs.vm1_docker.env_vars.SSH_HOST_KEY_SHA256).toBe(RECORDED);
    expect(jobs.vm1_packages.env_vars.SSH_KEY).toBeDefined();
  });

  test("a pin replaces the probe and the record: every job requires the pin from the first contact on", () => {
    const pinned = synth(context({ vms: [{ name: "vm1", hostKeySha256: pin }] })).tf;
    expect(Object.keys(pinned.resource.sless_job)).toEqual(["vm1_packages"]);
    expect(pinned.resource.terraform_data).toBeUndefined();
    expect(pinned.resource.sless_job.vm1_packages.env_vars.SSH_HOST_KEY_SHA256).toBe(pin);
  });

  test("an existing host keeps its record (nothing in the stack replaces it)", () => {
    const existing = synth(context({ jobTarget: "local", vms: [{ name: "vm1", kind: "existing", address: "192.0.2.7" }] })).tf;
    const rec = existing.resource.terraform_data.vm1_host_key;
    expect(rec.lifecycle.ignore_changes).toEqual(["input"]);
    expect(rec.lifecycle.replace_triggered_by).toBeUndefined();
    const packages = existing.resource.terraform_data.vm1_packages;
    expect(packages.provisioner[0]["local-exec"].environment.SSH_HOST_KEY_SHA256).toBe(RECORDED);
    // The probe's local job reads no key file: it has nothing to authenticate with.
    expect(existing.resource.terraform_data.vm1_host_key_probe.provisioner[0]["local-exec"].command).not.toMatch(/--ssh-key-file/);
  });
});

describe("strictHostKeys", () => {
  test("refuses a first contact without a pin, at synth", () => {
    expect(() => parseConfig(context({ vms: [{ name: "vm1", strictHostKeys: true }] }))).toThrow(
      /vms\[0\]\.strictHostKeys: true refuses a first contact without a pin; set vms\[0\]\.hostKeySha256/,
    );
  });

  test("with a pin it synthesizes, and the pin is all the jobs trust", () => {
    const { tf } = synth(context({ vms: [{ name: "vm1", strictHostKeys: true, hostKeySha256: pin }] }));
    expect(tf.resource.sless_job.vm1_packages.env_vars.SSH_HOST_KEY_SHA256).toBe(pin);
    expect(tf.resource.terraform_data).toBeUndefined();
  });
});
