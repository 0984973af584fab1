// Trust on first contact (vms[].hostKeys "first-contact", and every existing host), as synthesized: a probe job that reads the host key without authenticating, a
// terraform_data that records its first report and ignores later ones, and installers that require the
// recorded key (or the pin, which replaces both). What Terraform then does with it is proven end to end in
// __tests__/e2e/host-trust.test.ts.
import { acceptedKey, parseTrustArgs, type TrustDeps, TrustRefused, trustTarget } from "../bin/trust";
import { parseConfig } from "../lib/construct/config/parse";
import { context, synth } from "./support/synth";

const pin = `SHA256:${"A".repeat(43)}`;
const RECORDED = "${terraform_data.vm1_host_key.output.sha256}";

describe("trust on first contact: the record in Terraform state", () => {
  const { tf } = synth(
    context({ vms: [{ name: "vm1", hostKeys: "first-contact" }], installers: { docker: { enabled: true } } }),
  );
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
    // The probe's report, unless `npm run trust` gives the key the operator accepted for this VM.
    expect(record.input).toEqual({
      sha256:
        '${lookup(var.accepted_host_keys, "vm1", jsondecode(sless_job.vm1_host_key_probe.message).host_key_sha256)}',
    });
    expect(tf.variable.accepted_host_keys).toMatchObject({ type: "map(string)", default: {} });
    expect(record.lifecycle.ignore_changes).toEqual(["input"]);
    expect(record.lifecycle.replace_triggered_by).toEqual(["terraform_data.vm1_vm_generation"]);
    // Fails closed: a report without a fingerprint stops the deploy rather than recording nothing (which
    // the handlers would read as "no pin").
    expect(record.lifecycle.postcondition[0].condition).toBe(
      '${can(regex("^SHA256:[A-Za-z0-9+/]{43}$", self.output.sha256))}',
    );
  });

  test("every installer job requires the recorded key", () => {
    expect(jobs.vm1_packages.env_vars.SSH_HOST_KEY_SHA256).toBe(RECORDED);
    expect(jobs.vm1_docker.env_vars.SSH_HOST_KEY_SHA256).toBe(RECORDED);
    expect(jobs.vm1_packages.env_vars.SSH_KEY).toBeDefined();
  });

  test("a pin replaces the probe and the record: every job requires the pin from the first contact on", () => {
    const pinned = synth(context({ vms: [{ name: "vm1", hostKeys: "first-contact", hostKeySha256: pin }] })).tf;
    expect(Object.keys(pinned.resource.sless_job)).toEqual(["vm1_packages"]);
    expect(Object.keys(pinned.resource.terraform_data)).toEqual(["vm1_vm_generation"]); // no record: only what a new VM replaces
    expect(pinned.resource.sless_job.vm1_packages.env_vars.SSH_HOST_KEY_SHA256).toBe(pin);
  });

  test("an existing host keeps its record (nothing in the stack replaces it)", () => {
    const existing = synth(
      context({
        jobTarget: "local",
        vms: [{ name: "vm1", hostKeys: "first-contact", kind: "existing", address: "192.0.2.7" }],
      }),
    ).tf;
    const rec = existing.resource.terraform_data.vm1_host_key;
    expect(rec.lifecycle.ignore_changes).toEqual(["input"]);
    expect(rec.lifecycle.replace_triggered_by).toBeUndefined();
    const packages = existing.resource.terraform_data.vm1_packages;
    expect(packages.provisioner[0]["local-exec"].environment.SSH_HOST_KEY_SHA256).toBe(RECORDED);
    // The probe's local job reads no key file: it has nothing to authenticate with.
    expect(existing.resource.terraform_data.vm1_host_key_probe.provisioner[0]["local-exec"].command).not.toMatch(
      /--ssh-key-file/,
    );
  });
});

describe("strictHostKeys", () => {
  test("refuses a first contact without a pin, at synth", () => {
    expect(() =>
      parseConfig(context({ vms: [{ name: "vm1", hostKeys: "first-contact", strictHostKeys: true }] })),
    ).toThrow(/vms\[0\]\.strictHostKeys: true refuses a first contact without a pin; set vms\[0\]\.hostKeySha256/);
  });

  test("with a pin it synthesizes, and the pin is all the jobs trust", () => {
    const { tf } = synth(
      context({ vms: [{ name: "vm1", hostKeys: "first-contact", strictHostKeys: true, hostKeySha256: pin }] }),
    );
    expect(tf.resource.sless_job.vm1_packages.env_vars.SSH_HOST_KEY_SHA256).toBe(pin);
    expect(Object.keys(tf.resource.terraform_data)).toEqual(["vm1_vm_generation"]);
  });
});

// A replaced VM is a new machine with a new host key and nothing installed, whatever replaced it (a changed
// image, `terraform apply -replace`, a VM deleted outside Terraform: each gives the VM a new id, unknown
// at plan). What Terraform then does is proven against the twin in __tests__/e2e/twin-nubes-lifecycle.test.ts.
describe("a replaced VM is learned anew: every job and the record are replaced with the VM's id", () => {
  const VM_ID = "${nubes_vc_vm_v3.vm1_vm.id}";
  const GENERATION = "terraform_data.vm1_vm_generation";
  type Resources = Record<string, Record<string, any>>;
  const resourceAt = (resources: Resources, address: string) => {
    const [type, name] = address.split(".");
    return resources[type]?.[name];
  };
  /**
   * Whether a new VM id replaces the resource at `address`: its own triggers_replace holds the id, or a
   * resource its replace_triggered_by names is so replaced. replace_triggered_by naming the id itself does
   * not count: Terraform does not trigger on a resource being created, and a VM deleted outside Terraform
   * is planned as one.
   */
  const replacedByNewVm = (resources: Resources, address: string, seen = new Set<string>()): boolean => {
    if (seen.has(address)) return false;
    seen.add(address);
    const resource = resourceAt(resources, address);
    if (Object.values(resource?.triggers_replace ?? {}).includes(VM_ID)) return true;
    const triggers: string[] = resource?.lifecycle?.replace_triggered_by ?? [];
    return triggers.some((t) => t.split(".").length === 2 && replacedByNewVm(resources, t, seen));
  };
  const shapes = {
    "sless, state_out_flat": context({
      vms: [{ name: "vm1", hostKeys: "first-contact" }],
      installers: { docker: { enabled: true } },
    }),
    "sless, fixed address": context({ vms: [{ name: "vm1", hostKeys: "first-contact", address: "192.0.2.10" }] }),
    "sless, pinned": context({ vms: [{ name: "vm1", hostKeys: "first-contact", hostKeySha256: pin }] }),
    "local, state_out_flat": context({
      jobTarget: "local",
      vms: [{ name: "vm1", hostKeys: "first-contact" }],
      installers: { docker: { enabled: true } },
    }),
    "local, fixed address": context({
      jobTarget: "local",
      vms: [{ name: "vm1", hostKeys: "first-contact", address: "192.0.2.10" }],
    }),
    "local, pinned, fixed address": context({
      jobTarget: "local",
      vms: [{ name: "vm1", hostKeys: "first-contact", address: "192.0.2.10", hostKeySha256: pin }],
    }),
  };

  test.each(Object.entries(shapes))(
    "%s: every job (the probe first) is replaced when the VM's id changes",
    (_shape, ctx) => {
      const { tf } = synth(ctx);
      const jobType = tf.resource.sless_job ? "sless_job" : "terraform_data";
      const jobs = Object.keys(tf.resource[jobType]).filter((id) =>
        /^vm1_(host_key_probe|packages|docker|postgres)$/.test(id),
      );
      expect(jobs.length).toBeGreaterThan(0);
      expect(jobs.filter((id) => !replacedByNewVm(tf.resource, `${jobType}.${id}`))).toEqual([]);
      expect(tf.resource.terraform_data.vm1_vm_generation.triggers_replace).toEqual({ vm_id: VM_ID });
      if (tf.resource[jobType].vm1_host_key_probe) {
        expect(tf.resource[jobType].vm1_host_key_probe.lifecycle.replace_triggered_by).toEqual([GENERATION]);
        expect(tf.resource.terraform_data.vm1_host_key.lifecycle.replace_triggered_by).toEqual([GENERATION]);
        expect(replacedByNewVm(tf.resource, "terraform_data.vm1_host_key")).toBe(true);
      }
    },
  );

  test("the record takes the report of the probe that ran on the new VM, and the installers require the new record", () => {
    for (const jobTarget of ["sless", "local"]) {
      const { tf } = synth(
        context({ jobTarget, vms: [{ name: "vm1", hostKeys: "first-contact", address: "192.0.2.10" }] }),
      );
      const probeMessage =
        jobTarget === "sless"
          ? "sless_job.vm1_host_key_probe.message"
          : "terraform_data.vm1_host_key_probe_outcome.output.message";
      const record = tf.resource.terraform_data.vm1_host_key;
      expect(record.input.sha256).toContain(`jsondecode(${probeMessage}).host_key_sha256`);
      // The record is replaced with the VM, and its input then names the probe's new message: unknown until
      // the probe has run again on the new VM, so the record is made after it, from its report.
      expect(record.depends_on).toEqual([
        `${jobTarget === "sless" ? "sless_job" : "terraform_data"}.vm1_host_key_probe`,
      ]);
      const first = (tf.resource.sless_job ?? tf.resource.terraform_data).vm1_packages;
      expect(first.lifecycle.replace_triggered_by).toEqual(["terraform_data.vm1_host_key"]);
      expect(first.depends_on).toContain("terraform_data.vm1_host_key");
    }
  });

  test("an existing host: nothing names a VM id, and accepting a new key (a new record) reruns its installers", () => {
    const { tf } = synth(
      context({
        jobTarget: "local",
        vms: [{ name: "vm1", hostKeys: "first-contact", kind: "existing", address: "192.0.2.7" }],
      }),
    );
    expect(JSON.stringify(tf.resource)).not.toContain("nubes_vc_vm_v3");
    expect(tf.resource.terraform_data.vm1_host_key_probe.lifecycle?.replace_triggered_by).toBeUndefined();
    expect(tf.resource.terraform_data.vm1_packages.lifecycle.replace_triggered_by).toEqual([
      "terraform_data.vm1_host_key",
    ]);
  });
});

// npm run trust: only a key the operator accepted is recorded (bin/trust.ts). End to end, with the record
// and the installers: __tests__/e2e/host-trust.test.ts.
describe("npm run trust: the key an operator accepts", () => {
  const seen = `SHA256:${"S".repeat(43)}`;
  const other = `SHA256:${"O".repeat(43)}`;
  const target = { host: "192.0.2.7", port: 22, user: "ubuntu" };
  const deps = (over: Partial<TrustDeps> = {}) => {
    const said: string[] = [];
    const asked: string[] = [];
    const d: TrustDeps = {
      probe: async () => ({ hostKeySha256: seen, hostKeyType: "ssh-ed25519", attempts: 1 }),
      interactive: false,
      ask: async (q) => {
        asked.push(q);
        return "n";
      },
      say: (line) => said.push(line),
      ...over,
    };
    return { d, said, asked };
  };
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TrustRefused);
    return err as TrustRefused;
  };

  test("a fingerprint is taken exactly in ssh-keygen's form; anything else is refused before anything runs", () => {
    expect(parseTrustArgs(["web", seen, "-auto-approve"])).toEqual({
      vmName: "web",
      fingerprint: seen,
      applyArgs: ["-auto-approve"],
    });
    expect(parseTrustArgs(["web", "-auto-approve"])).toEqual({ vmName: "web", applyArgs: ["-auto-approve"] });
    expect(parseTrustArgs(["web"])).toEqual({ vmName: "web", applyArgs: [] });
    for (const bad of [
      `${seen}=`,
      seen.slice(0, -1),
      seen.replace("SHA256:", "sha256:"),
      "S".repeat(43),
      `MD5:${"a".repeat(43)}`,
      `${seen};id`,
      "yes",
    ]) {
      const err = (() => {
        try {
          parseTrustArgs(["web", bad]);
          return undefined;
        } catch (e) {
          return e as TrustRefused;
        }
      })();
      expect({ bad, code: err?.exitCode, message: err?.message }).toEqual({
        bad,
        code: 64,
        message: expect.stringContaining("is not an SSH host key fingerprint"),
      });
    }
    expect(() => parseTrustArgs([])).toThrow(/usage: npm run trust -- <vm name> \[SHA256:<fingerprint>\]/);
  });

  test("the given fingerprint is what the VM presents: that key is accepted, without a question", async () => {
    const { d, asked } = deps();
    await expect(acceptedKey("web", target, seen, d)).resolves.toBe(seen);
    expect(asked).toEqual([]);
  });

  test("a VM presenting another key than the one given: refused, naming both, nothing recorded", async () => {
    const err = await refusal(acceptedKey("web", target, other, deps().d));
    expect(err.exitCode).toBe(1);
    expect(err.message).toContain(
      `web at 192.0.2.7:22 presents ${seen} (ssh-ed25519), not the ${other} you gave: nothing was recorded and no installer ran`,
    );
    expect(err.message).toContain("ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub");
  });

  test("no fingerprint and no terminal: the key is shown, not recorded, and the message says to pass it", async () => {
    const { d, said, asked } = deps();
    const err = await refusal(acceptedKey("web", target, undefined, d));
    expect(err.exitCode).toBe(64);
    expect(err.message).toContain(`no terminal to confirm ${seen} on`);
    expect(err.message).toContain(`npm run trust -- web ${seen}`);
    expect(said.join("\n")).toContain(`web at 192.0.2.7:22 presents ${seen} (ssh-ed25519); nothing was authenticated`);
    expect(asked).toEqual([]);
  });

  test("no fingerprint at a terminal: recorded only after a yes", async () => {
    const yes = deps({ interactive: true, ask: async () => "yes" });
    await expect(acceptedKey("web", target, undefined, yes.d)).resolves.toBe(seen);
    for (const answer of ["", "n", "no", "y please"]) {
      const err = await refusal(
        acceptedKey("web", target, undefined, deps({ interactive: true, ask: async () => answer }).d),
      );
      expect({ answer, code: err.exitCode, message: err.message }).toEqual({
        answer,
        code: 1,
        message: expect.stringContaining("not recorded"),
      });
    }
  });

  test("a VM that does not answer: refused, nothing recorded", async () => {
    const err = await refusal(
      acceptedKey("web", target, seen, deps({ probe: async () => Promise.reject(new Error("ECONNREFUSED")) }).d),
    );
    expect(err.message).toBe("could not read web's host key at 192.0.2.7:22: ECONNREFUSED; nothing was recorded");
  });

  test("the VM: its fixed address or the deployed one; a pinned or unknown VM is refused", () => {
    const config = parseConfig(
      context({
        vms: [
          { name: "web", hostKeys: "first-contact" },
          { name: "db", kind: "existing", address: "192.0.2.9", sshPort: 2222 },
          { name: "pinned", hostKeys: "first-contact", hostKeySha256: pin },
        ],
      }),
    );
    expect(trustTarget(config, "web", { web_address: "10.0.0.5" })).toMatchObject({
      target: { host: "10.0.0.5", port: 22, user: "ubuntu" },
      record: "terraform_data.web_host_key",
    });
    expect(trustTarget(config, "db", {}).target).toEqual({ host: "192.0.2.9", port: 2222, user: "ubuntu" });
    expect(() => trustTarget(config, "web", {})).toThrow(
      /web has no address in the deployed state \(output web_address\): deploy it first/,
    );
    expect(() => trustTarget(config, "pinned", {})).toThrow(/pinned is pinned/);
    expect(() => trustTarget(config, "nope", {})).toThrow(/no VM named "nope" in cdktf.json \(VMs: web, db, pinned\)/);
  });
});
