// Host keys delivered to Nubes VMs (vms[].hostKeys "delivered", the default), as synthesized: the key bin/cdktf
// makes, the record that keeps the first one in state, the VM's cloud_init and the pin every job requires.
// The user's own cloud-init (vms[].cloudInit) is checked here too. Against the twin, end to end:
// __tests__/e2e/delivered-host-keys.test.ts.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { utils } from "ssh2";
import { TrustRefused, trustTarget } from "../bin/trust";
import { App } from "../lib/construct/cdktf";
import { checkCloudInit } from "../lib/construct/config/cloud-init";
import { parseConfig } from "../lib/construct/config/parse";
import { generateHostKey, hostKeyFile, readHostKeyFile, writeHostKeys } from "../lib/construct/delivered-host-keys";
import { resultsFolder } from "../lib/construct/jobs/secret-trigger";
import { VmInstallStack } from "../lib/construct/stack";
import { context, filesUnder, type TfJson, tempDir, testKeyPair, withTestKeys } from "./support/synth";

const pin = `SHA256:${"A".repeat(43)}`;
const RECORD = "terraform_data.vm1_delivered_host_key";

/** Synthesizes `ctx` for a project in `projectDir` (its key files under .vm-install there). */
function synthIn(projectDir: string, ctx: Record<string, unknown>): { tf: TfJson; outdir: string } {
  const config = parseConfig(withTestKeys(ctx, projectDir));
  const outdir = path.join(projectDir, "cdktf.out");
  const app = new App({ outdir });
  new VmInstallStack(app, config.stackName, { config, baseDir: projectDir });
  app.synth();
  return {
    tf: JSON.parse(fs.readFileSync(path.join(outdir, "stacks", config.stackName, "cdk.tf.json"), "utf8")),
    outdir,
  };
}

describe("the key bin/cdktf makes", () => {
  test("an ed25519 key in OpenSSH form that ssh2 and ssh-keygen read, with ssh-keygen's fingerprint (many keys: none fails by chance)", () => {
    for (let i = 0; i < 200; i++) {
      const key = generateHostKey("c");
      const parsed = utils.parseKey(key.private);
      expect(parsed).not.toBeInstanceOf(Error);
      expect((parsed as { type: string }).type).toBe("ssh-ed25519");
      expect(key.public.split(" ")[1]).toBe((parsed as { getPublicSSH(): Buffer }).getPublicSSH().toString("base64"));
    }
    const key = generateHostKey("vm-install host key of vm1");
    const dir = tempDir("keygen");
    fs.writeFileSync(path.join(dir, "k.pub"), `${key.public}\n`);
    fs.writeFileSync(path.join(dir, "k"), key.private, { mode: 0o600 });
    expect(execFileSync("ssh-keygen", ["-lf", path.join(dir, "k.pub")], { encoding: "utf8" })).toContain(
      ` ${key.sha256} `,
    );
    expect(execFileSync("ssh-keygen", ["-y", "-f", path.join(dir, "k")], { encoding: "utf8" }).trim()).toBe(
      key.public.split(" ").slice(0, 2).join(" "),
    );
  });

  test("one owner-only file per Nubes VM with a delivered key, never replaced once whole; a broken one is made anew", () => {
    const project = tempDir("hostkeys");
    const config = parseConfig(
      context({
        vms: [
          { name: "vm1" },
          { name: "old", hostKeys: "first-contact" },
          { name: "host", kind: "existing", address: "192.0.2.1" },
        ],
      }),
    );
    const file = hostKeyFile(resultsFolder(project, config.stackName), "vm1");
    expect(writeHostKeys(project, config)).toEqual([file]);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual(["vm1.host-key.json"]);
    const first = readHostKeyFile(file);
    expect(first?.sha256).toMatch(/^SHA256:/);
    expect(writeHostKeys(project, config)).toEqual([]);
    expect(readHostKeyFile(file)).toEqual(first);
    fs.writeFileSync(file, '{"public": "ssh-ed25519 AAAA"}');
    expect(writeHostKeys(project, config)).toEqual([file]);
    expect(readHostKeyFile(file)?.sha256).not.toBe(first?.sha256);
  });
});

describe("a Nubes VM's delivered key, as synthesized", () => {
  for (const jobTarget of ["sless", "local"] as const) {
    test(`${jobTarget}: every job, the first included, pins the record's key; no probe, no first-contact record`, () => {
      const project = tempDir("delivered");
      const { tf } = synthIn(project, context({ jobTarget, installers: { docker: { enabled: true } } }));
      const jobs = tf.resource.sless_job ?? tf.resource.terraform_data;
      expect(Object.keys(jobs).filter((id) => /host_key_probe/.test(id))).toEqual([]);
      expect(tf.resource.terraform_data.vm1_host_key).toBeUndefined();
      expect(tf.variable?.accepted_host_keys).toBeUndefined();
      const env = (id: string) =>
        jobTarget === "sless" ? jobs[id].env_vars : jobs[id].provisioner[0]["local-exec"].environment;
      for (const id of ["vm1_packages", "vm1_docker"]) {
        expect(env(id).SSH_HOST_KEY_SHA256).toBe(`\${${RECORD}.output.sha256}`);
        expect(env(id).SSH_HOST_KEY_SOURCE).toBe("delivered");
      }
      expect(tf.output.vm1_host_key_sha256.value).toBe(`\${${RECORD}.output.sha256}`);
      // The first installer waits for the VM (and a new VM replaces it), as a pinned VM's does.
      expect(jobs.vm1_packages.lifecycle.replace_triggered_by).toEqual(["terraform_data.vm1_vm_generation"]);
    });
  }

  test("the record reads the key file at plan time and keeps its first key; the VM's cloud_init delivers it as the only one", () => {
    const project = tempDir("delivered");
    const { tf } = synthIn(project, context());
    const record = tf.resource.terraform_data.vm1_delivered_host_key;
    const file = JSON.stringify(path.join("..", "..", "..", ".vm-install", "vm-install", "vm1.host-key.json"));
    expect(record.input).toEqual({
      public: `\${try(jsondecode(file(${file})).public, "")}`,
      private: `\${sensitive(try(jsondecode(file(${file})).private, ""))}`,
      sha256: `\${try(jsondecode(file(${file})).sha256, "")}`,
    });
    expect(record.lifecycle.ignore_changes).toEqual(["input"]);
    expect(record.lifecycle.replace_triggered_by).toBeUndefined();
    const vm = tf.resource.nubes_vc_vm_v3.vm1_vm;
    expect(vm.cloud_init).toBe(
      `#cloud-config\n\${yamlencode(merge({}, { ssh_keys = { ed25519_private = ${RECORD}.output.private, ed25519_public = ${RECORD}.output.public }, ssh_deletekeys = true, ssh_genkeytypes = [] }))}`,
    );
    // Never created without a key (Terraform run without bin/cdktf on a first create); replaced with the record only.
    expect(vm.lifecycle.precondition[0].condition).toBe(
      `\${can(regex("^SHA256:[A-Za-z0-9+/]{43}$", ${RECORD}.output.sha256))}`,
    );
    expect(vm.lifecycle.precondition[0].error_message).toMatch(
      /vm1: no host key to deliver: .*vm1\.host-key\.json .*npm run deploy .*"first-contact"/,
    );
    expect(vm.lifecycle.replace_triggered_by).toEqual([RECORD]);
  });

  test("Terraform without bin/cdktf on a first create: no VM is made from an empty record, and every plan says how to make it anew", () => {
    const project = tempDir("nokey");
    const ctx = context();
    const { tf, outdir } = synthIn(project, ctx);
    const stackDir = path.join(outdir, "stacks", "vm-install");
    // Only built-ins here: a terraform_data stands in for the VM, with its precondition and its cloud_init.
    const vm = tf.resource.nubes_vc_vm_v3.vm1_vm;
    const standIn = { input: { cloud_init: vm.cloud_init }, lifecycle: { precondition: vm.lifecycle.precondition } };
    const resources = { vm1_delivered_host_key: tf.resource.terraform_data.vm1_delivered_host_key, vm1_vm: standIn };
    fs.writeFileSync(path.join(stackDir, "cdk.tf.json"), JSON.stringify({ resource: { terraform_data: resources } }));
    const cliConfig = path.join(project, "terraformrc");
    fs.writeFileSync(cliConfig, "");
    const terraform = (...args: string[]) => {
      const r = spawnSync(
        "terraform",
        [`-chdir=${stackDir}`, ...args, ...(args[0] === "state" ? [] : ["-no-color", "-input=false"])],
        {
          env: { ...process.env, TF_CLI_CONFIG_FILE: cliConfig, CHECKPOINT_DISABLE: "1" },
          encoding: "utf8",
        },
      );
      return { code: r.status, text: `${r.stdout}${r.stderr}`.replace(/[│\s]+/g, " ") };
    };
    const refusal = "vm1: terraform_data.vm1_delivered_host_key holds no host key to deliver: it was made while";
    expect(terraform("init").code).toBe(0);
    const first = terraform("apply", "-auto-approve");
    expect(first.code).not.toBe(0);
    expect(first.text).toContain(refusal);
    expect(terraform("state", "list").text.trim()).toBe("terraform_data.vm1_delivered_host_key"); // no VM
    // bin/cdktf makes the file, but the record keeps what it was made with: the plan still says what to do.
    writeHostKeys(project, parseConfig(ctx));
    const again = terraform("plan");
    expect(again.code).not.toBe(0);
    expect(again.text).toContain(
      "then terraform apply -replace=terraform_data.vm1_delivered_host_key in the stack folder",
    );
    expect(terraform("apply", "-auto-approve", "-replace=terraform_data.vm1_delivered_host_key").code).toBe(0);
    const key = readHostKeyFile(hostKeyFile(resultsFolder(project, "vm-install"), "vm1"))!;
    expect(terraform("state", "show", "terraform_data.vm1_delivered_host_key").text).toContain(key.sha256);
    expect(terraform("state", "list").text).toContain("terraform_data.vm1_vm");
  });

  test("cdktf.out holds no private key material, with the key file in place", () => {
    const project = tempDir("delivered");
    const ctx = context({ jobTarget: "local" });
    writeHostKeys(project, parseConfig(ctx));
    const key = readHostKeyFile(hostKeyFile(resultsFolder(project, "vm-install"), "vm1"))!;
    const { outdir } = synthIn(project, ctx);
    const body = key.private.split("\n").filter((l) => l && !l.startsWith("-----"));
    for (const file of filesUnder(outdir)) {
      const text = fs.readFileSync(file, "utf8");
      // The handler bundles (assets/) carry ssh2's key parser, which names the PEM headers.
      if (!file.includes(`${path.sep}assets${path.sep}`)) expect(text).not.toContain("PRIVATE KEY");
      for (const line of body) expect(text).not.toContain(line);
      expect(text).not.toContain(key.sha256); // the fingerprint comes from state too, never from synth
    }
  });

  test('hostKeys "first-contact" synthesizes the probe and the record, and no cloud_init without cloudInit', () => {
    const { tf } = synthIn(tempDir("fc"), context({ vms: [{ name: "vm1", hostKeys: "first-contact" }] }));
    expect(Object.keys(tf.resource.sless_job)).toEqual(["vm1_host_key_probe", "vm1_packages"]);
    expect(Object.keys(tf.resource.terraform_data).sort()).toEqual(["vm1_host_key", "vm1_vm_generation"]);
    expect(tf.resource.sless_job.vm1_packages.env_vars.SSH_HOST_KEY_SOURCE).toBe("first-contact");
    expect(tf.resource.nubes_vc_vm_v3.vm1_vm.cloud_init).toBeUndefined();
    expect(tf.resource.nubes_vc_vm_v3.vm1_vm.lifecycle).toBeUndefined();
  });
});

describe("hostKeys and the settings beside it", () => {
  const problems = (vm: Record<string, unknown>) => {
    try {
      parseConfig(context({ vms: [{ name: "vm1", ...vm }] }));
      return [];
    } catch (err) {
      return (err as { problems: string[] }).problems;
    }
  };

  test("defaults: delivered for a Nubes VM, first-contact for a pinned one and for an existing host", () => {
    const config = parseConfig(
      context({
        vms: [{ name: "a" }, { name: "b", hostKeySha256: pin }, { name: "c", kind: "existing", address: "192.0.2.1" }],
      }),
    );
    expect(config.vms.map((vm) => vm.hostKeys)).toEqual(["delivered", "first-contact", "first-contact"]);
  });

  test("refused: a delivered key to an existing host, beside a pin; cloudInit on an existing host; an unknown mode", () => {
    expect(problems({ kind: "existing", address: "192.0.2.1", hostKeys: "delivered" })).toEqual([
      expect.stringMatching(/^vms\[0\]\.hostKeys: "delivered" is only for kind "nubes"/),
    ]);
    expect(problems({ hostKeys: "delivered", hostKeySha256: pin })).toEqual([
      expect.stringMatching(
        /^vms\[0\]\.hostKeySha256: with hostKeys "delivered" the VM presents the host key the stack generates/,
      ),
    ]);
    expect(problems({ kind: "existing", address: "192.0.2.1", cloudInit: "ci.yaml" })).toEqual([
      expect.stringMatching(/^vms\[0\]\.cloudInit: only for kind "nubes"/),
    ]);
    expect(problems({ hostKeys: "tofu" })).toEqual([expect.stringMatching(/^vms\[0\]\.hostKeys: /)]);
  });

  test("strictHostKeys: a delivered key satisfies it; first-contact without a pin is refused as before", () => {
    expect(problems({ strictHostKeys: true })).toEqual([]);
    expect(problems({ strictHostKeys: true, hostKeys: "first-contact" })).toEqual([
      expect.stringMatching(/^vms\[0\]\.strictHostKeys: true refuses a first contact/),
    ]);
  });

  test("npm run trust refuses a VM whose key is delivered, naming hostKeys", () => {
    const config = parseConfig(context({ vms: [{ name: "web" }] }));
    expect(() => trustTarget(config, "web", { web_address: "10.0.0.5" })).toThrow(TrustRefused);
    expect(() => trustTarget(config, "web", { web_address: "10.0.0.5" })).toThrow(
      /web's host key is the one this stack delivered through its cloud_init .*nothing to accept.*set vms\[\]\.hostKeys to "first-contact"/,
    );
  });
});

describe("the user's cloud-init (vms[].cloudInit)", () => {
  const check = (text: string) => checkCloudInit(text, "ubuntu");

  test("refused with the line: not #cloud-config, not YAML, not a mapping, two documents, a duplicate key", () => {
    expect(check("#!/bin/sh\necho hi\n").problems).toEqual([expect.stringMatching(/^line 1: must be "#cloud-config"/)]);
    expect(check("#cloud-config\npackages: [jq\nruncmd: []\n").problems).toEqual([
      expect.stringMatching(/^line 3: not YAML: /),
    ]);
    expect(check("#cloud-config\n- jq\n").problems).toEqual([
      expect.stringMatching(/^line 2: the document must be a mapping/),
    ]);
    expect(check("#cloud-config\na: 1\n---\nb: 2\n").problems).toEqual([
      expect.stringMatching(/more than one YAML document/),
    ]);
    expect(check("#cloud-config\na: 1\na: 2\n").problems).toEqual([
      expect.stringMatching(/^line 3: not YAML: Map keys must be unique/),
    ]);
  });

  test("refused: every key that decides the host key, and a module list", () => {
    for (const key of [
      "ssh_keys: {rsa_private: x}",
      "ssh_deletekeys: false",
      "ssh_genkeytypes: [rsa]",
      "cloud_init_modules: [ssh]",
    ]) {
      const { problems } = check(`#cloud-config\npackages: [jq]\n${key}\n`);
      expect(problems).toEqual([expect.stringMatching(new RegExp(`^line 3: ${key.split(":")[0]}: `))]);
    }
    expect(check("#cloud-config\nssh_publish_hostkeys: {enabled: true}\n").problems).toEqual([]);
  });

  test("the login user stays the stack's: user:, system_info.default_user, users: that name it; extra users allowed", () => {
    expect(check("#cloud-config\nuser: bob\n").problems).toEqual([
      expect.stringMatching(/^line 2: user: the login user is vms\[\]\.user \("ubuntu"\)/),
    ]);
    expect(check("#cloud-config\nsystem_info:\n  default_user: {name: bob}\n").problems).toEqual([
      expect.stringMatching(/^line 2: system_info\.default_user: /),
    ]);
    expect(check("#cloud-config\nusers:\n  - default\n  - name: ubuntu\n").problems).toEqual([
      expect.stringMatching(/^line 4: users entry "ubuntu" is the login user/),
    ]);
    expect(check("#cloud-config\nusers: [default, ubuntu]\n").problems).toEqual([
      expect.stringMatching(/users entry "ubuntu" is the login user/),
    ]);
    expect(check("#cloud-config\nusers:\n  - name: alice\n").problems).toEqual([]);
    expect(check("#cloud-config\nusers: alice, bob\n").problems).toEqual([
      expect.stringMatching(/^line 2: users: must be a list/),
    ]);
    expect(check("#cloud-config\nusers: [default, {groups: x}]\n").problems).toEqual([
      expect.stringMatching(/users entry: needs a name/),
    ]);
    expect(check("#cloud-config\nusers:\n  - default\n  - name: alice\n    groups: [adm]\n  - bob\n")).toEqual({
      document: { users: ["default", { name: "alice", groups: ["adm"] }, "bob"] },
      problems: [],
    });
  });

  test("checked as cloud-init reads it, merge keys and aliases resolved: a refused key cannot come in through <<", () => {
    const base =
      "#cloud-config\nbase: &b\n  ssh_genkeytypes: [rsa]\n  user: bob\n  cloud_final_modules: [runcmd]\n<<: *b\n";
    expect(check(base).problems).toEqual([
      expect.stringMatching(
        /^line 6: ssh_genkeytypes \(through the merge key <<\): the VM's host keys are the stack's/,
      ),
      expect.stringMatching(/^line 6: user \(through the merge key <<\): the login user is vms\[\]\.user/),
      expect.stringMatching(/^line 6: cloud_final_modules \(through the merge key <<\): a module list/),
    ]);
    expect(check("#cloud-config\nsi: &s\n  default_user: {name: bob}\nsystem_info: *s\n").problems).toEqual([
      expect.stringMatching(/^line 4: system_info\.default_user: /),
    ]);
    // The login user named through an alias, in a list given by an alias, and in an entry built by <<.
    expect(check("#cloud-config\nwho: &w ubuntu\nusers: [default, *w]\n").problems).toEqual([
      expect.stringMatching(/users entry "ubuntu" is the login user/),
    ]);
    expect(check("#cloud-config\nl: &l [default, ubuntu]\nusers: *l\n").problems).toEqual([
      expect.stringMatching(/users: entry 2 "ubuntu" is the login user/),
    ]);
    expect(check("#cloud-config\nu: &u {name: ubuntu}\nusers:\n  - <<: *u\n    groups: [adm]\n").problems).toEqual([
      expect.stringMatching(/^line 4: users entry "ubuntu" is the login user/),
    ]);
    // Aliases that resolve to what is allowed stay allowed, and reach the VM resolved.
    expect(check("#cloud-config\nl: &l [default, {name: alice}]\nusers: *l\n")).toEqual({
      document: { l: ["default", { name: "alice" }], users: ["default", { name: "alice" }] },
      problems: [],
    });
  });

  test("read as cloud-init reads it (YAML 1.1): yes is true, 0644 is 420; an empty document is {}", () => {
    expect(check("#cloud-config\na: yes\nb: 0644\nc: 2001-01-01\nd: '0644'\n").document).toEqual({
      a: true,
      b: 420,
      c: "2001-01-01",
      d: "0644",
    });
    expect(check("#cloud-config\n").document).toEqual({});
  });

  test("a valid one is merged with the stack's part; ${ and %{ in it stay plain text; problems name the VM, the file and the line", () => {
    const project = tempDir("ci");
    fs.writeFileSync(
      path.join(project, "ci.yaml"),
      "#cloud-config\npackages: [jq]\nruncmd:\n  - echo ${HOME} %{x} $${y}\n",
    );
    const { tf } = synthIn(project, context({ vms: [{ name: "vm1", cloudInit: "ci.yaml" }] }));
    const cloudInit: string = tf.resource.nubes_vc_vm_v3.vm1_vm.cloud_init;
    const user = JSON.stringify(JSON.stringify({ packages: ["jq"], runcmd: ["echo ${HOME} %{x} $${y}"] }))
      .replace(/\$\{/g, "$$$${")
      .replace(/%\{/g, "%%{");
    expect(cloudInit).toBe(
      `#cloud-config\n\${yamlencode(merge(jsondecode(${user}), { ssh_keys = { ed25519_private = ${RECORD}.output.private, ed25519_public = ${RECORD}.output.public }, ssh_deletekeys = true, ssh_genkeytypes = [] }))}`,
    );
    // A users: list of the user's own gets the login user appended: cloud-init would let it replace the platform's.
    fs.writeFileSync(path.join(project, "users.yaml"), "#cloud-config\nusers:\n  - name: alice\n");
    fs.copyFileSync(testKeyPair().publicKeyPath, path.join(project, "k.pub"));
    const withUsers = synthIn(
      project,
      context({ vms: [{ name: "vm1", user: "deployer", cloudInit: "users.yaml", publicKeyPath: "k.pub" }] }),
    ).tf;
    expect(withUsers.resource.nubes_vc_vm_v3.vm1_vm.cloud_init).toContain(
      `ssh_genkeytypes = [], users = concat(jsondecode("[{\\"name\\":\\"alice\\"}]"), [{ name = "deployer", ssh_authorized_keys = [chomp(file("../../../k.pub"))], sudo = "ALL=(ALL) NOPASSWD:ALL", shell = "/bin/bash", lock_passwd = true }]) }))}`,
    );
    // A first-contact VM gets the user's document alone.
    const fc = synthIn(
      tempDir("ci-fc"),
      context({ vms: [{ name: "vm1", hostKeys: "first-contact", cloudInit: path.join(project, "ci.yaml") }] }),
    ).tf;
    expect(fc.resource.nubes_vc_vm_v3.vm1_vm.cloud_init).toBe(
      `#cloud-config\n\${yamlencode(merge(jsondecode(${user}), {}))}`,
    );

    fs.writeFileSync(path.join(project, "bad.yaml"), "#cloud-config\npackages: [jq]\nssh_keys: {}\n");
    expect(() =>
      synthIn(
        project,
        context({
          vms: [
            { name: "vm1", cloudInit: "bad.yaml" },
            { name: "vm2", cloudInit: "none.yaml" },
          ],
        }),
      ),
    ).toThrow(
      /vms\[0\]\.cloudInit \(bad\.yaml\): line 3: ssh_keys: [^\n]*\n {2}- vms\[1\]\.cloudInit \(none\.yaml\): cannot read .*none\.yaml: ENOENT/,
    );
  });
});
