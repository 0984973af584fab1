// A snapshot's layer is what the VM wrote: removing its identity files must never follow a symlink the VM
// made out of the layer (dev/sandbox/snapshot.ts scrubIdentity).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { scrubIdentity } from "../../dev/sandbox/snapshot";

describe("scrubIdentity", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-scrub-"));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const write = (file: string, text = "x") => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  };

  test("removes machine-id, random seed and host keys from a plain layer, and nothing else", () => {
    const layer = path.join(tmp, "plain");
    for (const f of ["etc/machine-id", "var/lib/systemd/random-seed", "etc/ssh/ssh_host_ed25519_key"]) {
      write(path.join(layer, f));
    }
    write(path.join(layer, "etc/ssh/sshd_config"));
    write(path.join(layer, "etc/hostname"));
    scrubIdentity(layer);
    const left = (d: string) => fs.readdirSync(path.join(layer, d)).sort();
    expect({ etc: left("etc"), ssh: left("etc/ssh"), systemd: left("var/lib/systemd") }).toEqual({
      etc: ["hostname", "ssh"],
      ssh: ["sshd_config"],
      systemd: [],
    });
  });

  test("directories the VM made symlinks (to the host's own paths, or anywhere) are not followed", () => {
    const host = path.join(tmp, "host");
    for (const f of ["etc/ssh/ssh_host_rsa_key", "etc/machine-id", "lib/systemd/random-seed", "lib/dbus/machine-id"]) {
      write(path.join(host, f), "host's");
    }
    const layer = path.join(tmp, "hostile");
    fs.mkdirSync(path.join(layer, "var/lib"), { recursive: true });
    fs.symlinkSync(path.join(host, "etc"), path.join(layer, "etc")); // /etc itself
    fs.symlinkSync(path.join(host, "lib/systemd"), path.join(layer, "var/lib/systemd")); // one level down
    fs.mkdirSync(path.join(layer, "var/lib/dbus"));
    // The file itself a symlink to the host's: unlinked, the host's file stays.
    fs.symlinkSync(path.join(host, "lib/dbus/machine-id"), path.join(layer, "var/lib/dbus/machine-id"));
    scrubIdentity(layer);
    for (const f of ["etc/ssh/ssh_host_rsa_key", "etc/machine-id", "lib/systemd/random-seed", "lib/dbus/machine-id"]) {
      expect({ f, text: fs.readFileSync(path.join(host, f), "utf8") }).toEqual({ f, text: "host's" });
    }
    expect(fs.lstatSync(path.join(layer, "var/lib/dbus/machine-id"), { throwIfNoEntry: false })).toBeUndefined();
  });
});
