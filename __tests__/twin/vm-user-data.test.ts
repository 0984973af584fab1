// The user-data a twin VM boots with, as the twin assumes the Nubes platform composes it: a multipart
// whose first part makes user_login with user_public_key and whose second is cloud_init, read back
// with Python's email parser (the one cloud-init walks user-data with); and the plan-time check that
// cloud_init is user-data cloud-init takes.
import { spawnSync } from "node:child_process";
import { multipartUserData } from "../../dev/sandbox/cloud-init";
import { vmProblems } from "../../dev/twin/nubes/vm-settings";
import { cloudInitProblems, userDataProblem, vmUserData } from "../../dev/twin/nubes/vm-user-data";
import { UNKNOWN } from "../../dev/twin/protocol/cty-value";

const KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@host";
const VM = {
  vm_name: "web",
  user_login: "deploy",
  user_public_key: KEY,
  access_port_list: '["22"]',
  delete_mode: "delete",
};

/** [content type, filename, decoded payload] of every leaf part, as cloud-init's user_data.py walks them. */
function walk(userData: string): [string, string, string][] {
  const py = `
import email, json, sys
msg = email.message_from_string(sys.stdin.read())
out = []
for part in msg.walk():
    if part.get_content_maintype() == "multipart":
        continue
    out.append([part.get_content_type(), part.get_filename(), part.get_payload(decode=True).decode()])
print(json.dumps(out))
`;
  const r = spawnSync("python3", ["-c", py], { input: userData, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`python3 could not read the user-data: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe("the twin VM's user-data", () => {
  test("without cloud_init: one cloud-config part with the login user, its key, passwordless sudo and bash", () => {
    const parts = walk(vmUserData({ ...VM, cloud_init: null }));
    expect(parts.map(([t, f]) => [t, f])).toEqual([["text/cloud-config", "nubes-platform.cfg"]]);
    expect(parts[0][2]).toBe(
      `#cloud-config\nusers:\n  - name: "deploy"\n    ssh_authorized_keys: ["${KEY}"]\n` +
        '    sudo: "ALL=(ALL) NOPASSWD:ALL"\n    shell: /bin/bash\n    lock_passwd: true\n',
    );
  });

  test.each([
    [
      "a cloud-config",
      "#cloud-config\nruncmd: [[touch, /x]]\n",
      [["text/cloud-config", "#cloud-config\nruncmd: [[touch, /x]]\n"]],
    ],
    ["a script", "#!/bin/sh\necho hi\n", [["text/x-shellscript", "#!/bin/sh\necho hi\n"]]],
    [
      "non-ASCII text",
      '#cloud-config\nwrite_files: [{path: /x, content: "héllo"}]\n',
      [["text/cloud-config", '#cloud-config\nwrite_files: [{path: /x, content: "héllo"}]\n']],
    ],
    [
      "a multipart of its own (nested as it is)",
      multipartUserData([
        { text: "#cloud-config\na: 1\n", filename: "one" },
        { text: "#!/bin/sh\ntrue\n", filename: "two" },
      ]),
      [
        ["text/cloud-config", "#cloud-config\na: 1\n"],
        ["text/x-shellscript", "#!/bin/sh\ntrue\n"],
      ],
    ],
  ])("with cloud_init as %s: the platform's part first, then cloud_init's, unchanged", (_what, cloudInit, after) => {
    const parts = walk(vmUserData({ ...VM, cloud_init: cloudInit }));
    expect(parts[0].slice(0, 2)).toEqual(["text/cloud-config", "nubes-platform.cfg"]);
    expect(parts.slice(1).map(([t, , body]) => [t, body])).toEqual(after);
  });
});

describe("plan-time check of cloud_init", () => {
  test.each([
    ["#cloud-config YAML", "#cloud-config\npackage_upgrade: true\nruncmd:\n  - [sh, -c, 'exit 0']\n"],
    ["an empty #cloud-config", "#cloud-config\n"],
    ["a #! script", "#!/bin/bash\nset -e\n"],
    ["a multipart of cloud-config and script parts", vmUserData({ ...VM, cloud_init: "#!/bin/sh\ntrue\n" })],
  ])("takes %s", (_what, text) => {
    expect(userDataProblem(text)).toBeUndefined();
  });

  test.each([
    ["no header line", "packages: [jq]\n", 'its first line "packages: [jq]" is none of "#cloud-config", "#!"'],
    ["a header with a typo", "#cloud-conifg\npackages: [jq]\n", "is none of"],
    ["YAML that does not parse", "#cloud-config\nruncmd: [touch /x\n", "it is not YAML:"],
    ["a YAML list", "#cloud-config\n- a\n- b\n", "its YAML is not a mapping"],
    ["a YAML string", "#cloud-config\njust words\n", "its YAML is not a mapping"],
    [
      "a multipart with an unsupported part",
      'Content-Type: multipart/mixed; boundary="b"\nMIME-Version: 1.0\n\n--b\nContent-Type: text/plain\n\nhi\n--b--\n',
      'part 1 has Content-Type "text/plain"',
    ],
    [
      "a multipart without its closing boundary",
      'Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/cloud-config\n\na: 1\n',
      "no closing --b--",
    ],
    [
      "a multipart whose base64 cloud-config part is not YAML",
      `Content-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/cloud-config\nContent-Transfer-Encoding: base64\n\n${Buffer.from("a: [1\n").toString("base64")}\n--b--\n`,
      "part 1 (text/cloud-config): it is not YAML",
    ],
  ])("refuses %s, saying why", (_what, text, why) => {
    expect(userDataProblem(text)).toContain(why);
  });

  test("is an error diagnostic on cloud_init among the VM's other checks; unset, empty and unknown pass", () => {
    expect(vmProblems({ ...VM, cloud_init: "packages: [jq]\n" })).toEqual([
      {
        severity: 1,
        summary: "nubes_vc_vm_v3: cloud_init is not user-data cloud-init accepts",
        detail: expect.stringContaining("Give a #cloud-config YAML mapping, a #! script or a MIME multipart"),
        attribute: { steps: [{ attribute_name: "cloud_init" }] },
      },
    ]);
    for (const v of [null, undefined, "", UNKNOWN])
      expect(cloudInitProblems({ ...VM, cloud_init: v as never })).toEqual([]);
  });
});

describe("plan-time check of user_login", () => {
  test.each(["operator", "users", "staff", "root", "daemon"])(
    "user_login %s, a base-passwd name cloud-init cannot create, is refused",
    (login) => {
      expect(vmProblems({ ...VM, user_login: login })).toEqual([
        expect.objectContaining({
          summary: `nubes_vc_vm_v3: user_login "${login}" is a system name of the image`,
          attribute: { steps: [{ attribute_name: "user_login" }] },
        }),
      ]);
      expect(vmProblems({ ...VM, user_login: "deploy" })).toEqual([]);
    },
  );
});
