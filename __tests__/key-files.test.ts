// The key files cdktf.json names are checked at synth and named by their key path: a missing, unreadable
// or wrong key stops `cdktf synth` with what to do, instead of failing each job at apply (issue 33 item 4).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";
import { context, synth, tempDir, testKeyPair } from "./support/synth";

/** The synth's validation problems for one VM given these settings (none: []). */
function problems(vm: Record<string, unknown>, patch: Record<string, unknown> = {}): string[] {
  try {
    synth(context({ vms: [{ name: "vm1", ...vm }], ...patch }));
    return [];
  } catch (err) {
    return String((err as Error).message)
      .split("\n")
      .filter((l) => /^\s+\[/.test(l))
      .map((l) => l.replace(/^\s+\[[^\]]*\] /, ""));
  }
}

const dir = tempDir("keyfiles");
const good = testKeyPair();
function file(name: string, text: string, mode = 0o600): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text, { mode });
  fs.chmodSync(f, mode);
  return f;
}
const other = path.join(dir, "other");
execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", other]);
const encrypted = path.join(dir, "encrypted");
execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "a passphrase", "-f", encrypted]);

describe("privateKeyPath at synth", () => {
  const at = (f: string) => `vms[vm1].privateKeyPath (${f})`;
  test.each([
    ["missing", path.join(dir, "absent"), /does not exist; make it with ssh-keygen -t ed25519 -N '' -f .*absent/],
    ["a folder", dir, /is a folder; name the key file/],
    ["the public half", good.publicKeyPath, /holds a public key; it must hold the private key/],
    ["encrypted", encrypted, /is encrypted with a passphrase, and a job cannot type one/],
    ["not a key", file("junk", "not a key at all\n"), /could not be read as a private key/],
    [
      "readable by others",
      file("open", fs.readFileSync(good.privateKeyPath, "utf8"), 0o640),
      /UNPROTECTED PRIVATE KEY FILE/,
    ],
  ])("%s: one problem naming the setting and the file", (_case, key, words) => {
    const found = problems({ kind: "existing", address: "192.0.2.1", privateKeyPath: key });
    expect(found).toEqual([expect.stringContaining(at(key))]);
    expect(found[0]).toMatch(words);
  });

  test("relative to the project as written, and named as written", () => {
    const written = path.relative(PROJECT_ROOT, path.join(dir, "absent"));
    expect(problems({ kind: "existing", address: "192.0.2.1", privateKeyPath: written })).toEqual([
      expect.stringMatching(
        new RegExp(
          `^vms\\[vm1\\]\\.privateKeyPath \\(${written.replace(/\./g, "\\.")}\\): ${path.join(dir, "absent")} does not exist`,
        ),
      ),
    ]);
  });

  test("a usable key passes; a VM that runs no job needs none", () => {
    expect(problems({ kind: "existing", address: "192.0.2.1", privateKeyPath: good.privateKeyPath })).toEqual([]);
    const noJobs = { packages: { enabled: false } };
    expect(
      problems({
        kind: "existing",
        address: "192.0.2.1",
        privateKeyPath: path.join(dir, "absent"),
        installers: noJobs,
      }),
    ).toEqual([]);
  });
});

describe("publicKeyPath at synth (a VM the stack creates)", () => {
  const at = (f: string) => `vms[vm1].publicKeyPath (${f})`;
  test.each([
    ["missing", path.join(dir, "absent.pub"), /does not exist; make it from the private key with ssh-keygen -y -f/],
    ["the private key", good.privateKeyPath, /is not an OpenSSH public key/],
    ["not a key", file("junk.pub", "ssh-ed25519 nonsense\n", 0o644), /is not an OpenSSH public key/],
    [
      "another key's public half",
      `${other}.pub`,
      /is not the public half of .*: the VM would authorise a key the jobs do not hold/,
    ],
  ])("%s: one problem naming the setting and the file", (_case, pub, words) => {
    const found = problems({ privateKeyPath: good.privateKeyPath, publicKeyPath: pub });
    expect(found).toEqual([expect.stringContaining(at(pub))]);
    expect(found[0]).toMatch(words);
  });

  test("the pair passes; an existing host has no public key setting to check", () => {
    expect(problems({ privateKeyPath: good.privateKeyPath, publicKeyPath: good.publicKeyPath })).toEqual([]);
    expect(problems({ kind: "existing", address: "192.0.2.1", privateKeyPath: good.privateKeyPath })).toEqual([]);
  });
});

describe("the job is told where its key comes from (SSH_KEY_SETTING), for its messages", () => {
  test("both targets pass the setting as written; never the key", () => {
    const sless = synth(context({ vms: [{ name: "vm1" }] })).tf;
    const written = path.relative(PROJECT_ROOT, good.privateKeyPath);
    expect(sless.resource.sless_job.vm1_packages.env_vars.SSH_KEY_SETTING).toBe(`vms[vm1].privateKeyPath (${written})`);
    const local = synth(
      context({ jobTarget: "local", vms: [{ name: "h1", kind: "existing", address: "192.0.2.1" }] }),
    ).tf;
    const run = local.resource.terraform_data.h1_packages.provisioner[0]["local-exec"];
    expect(run.environment.SSH_KEY_SETTING).toBe(`vms[h1].privateKeyPath (${written})`);
  });
});
