// bin/cdktf stops a deploy or destroy whose secret variable is unset, naming it: Terraform would prompt
// for it, and piped cdktf waits for ever (seen: a destroy without TF_VAR_pg_password hung 10 minutes).
import { parseConfig } from "../lib/construct/config/parse";
import { unsetSecretsMessage, unsetSecretVariables } from "../lib/construct/installers/unset-secrets";

const config = parseConfig({
  jobTarget: "local",
  installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
  vms: [
    { name: "one", kind: "existing", address: "192.0.2.1" },
    { name: "two", kind: "existing", address: "192.0.2.2" },
    { name: "off", kind: "existing", address: "192.0.2.3", installers: { postgres: { enabled: false } } },
  ],
});

describe("unsetSecretVariables", () => {
  test.each([["deploy"], ["apply"], ["destroy"]])("cdktf %s: each unset variable once, with every use", (cmd) => {
    expect(unsetSecretVariables(config, {}, [cmd, "--auto-approve"])).toEqual([
      {
        variable: "TF_VAR_pg_password",
        holds: ["install-postgres's db_password on vms[one]", "install-postgres's db_password on vms[two]"],
      },
    ]);
  });

  test("set but empty: named as such, before Terraform (whose words cdktf may drop as it exits)", () => {
    const empty = unsetSecretVariables(config, { TF_VAR_pg_password: "" }, ["destroy"]);
    expect(empty).toEqual([
      {
        variable: "TF_VAR_pg_password",
        holds: ["install-postgres's db_password on vms[one]", "install-postgres's db_password on vms[two]"],
        empty: true,
      },
    ]);
    expect(unsetSecretsMessage("destroy", empty)).toBe(
      "vm-install: cdktf destroy needs TF_VAR_pg_password set, not empty (install-postgres's db_password on " +
        "vms[one], install-postgres's db_password on vms[two]); export TF_VAR_pg_password=...\n" +
        "vm-install: the stack refuses an empty secret; nothing was run",
    );
  });

  test("set or another command: none", () => {
    expect(unsetSecretVariables(config, { TF_VAR_pg_password: "x" }, ["destroy"])).toEqual([]);
    for (const cmd of ["synth", "diff", "output"]) expect(unsetSecretVariables(config, {}, [cmd])).toEqual([]);
    expect(unsetSecretVariables(config, {}, [])).toEqual([]);
  });

  test("sless: a value cdktf hands Terraform with --var counts as set; a --var-file may hold any: none checked", () => {
    const sless = parseConfig({
      nubes: { vdcUid: "vdc-1", nsxtUid: "nsxt-1" },
      vms: [{ name: "one" }],
      installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
    });
    for (const args of [
      ["destroy", "--var", "pg_password=x"],
      ["destroy", "--var=pg_password=x"],
      ["deploy", "--var", "other=1", "--var", "pg_password="],
      ["deploy", "--var-file", "secrets.tfvars"],
      ["deploy", "--var-file=secrets.tfvars"],
    ])
      expect(unsetSecretVariables(sless, {}, args)).toEqual([]);
    // Another variable given that way leaves this one unset.
    expect(unsetSecretVariables(sless, {}, ["deploy", "--var", "other=pg_password"])).toHaveLength(1);
  });

  test("local target: the runner reads TF_VAR_ from the environment, so --var and --var-file do not count", () => {
    for (const args of [
      ["destroy", "--var", "pg_password=x"],
      ["deploy", "--var-file=secrets.tfvars"],
    ])
      expect(unsetSecretVariables(config, {}, args)).toHaveLength(1);
  });

  test("the message names the command, the variable, what it holds and what to do", () => {
    const message = unsetSecretsMessage("destroy", unsetSecretVariables(config, {}, ["destroy"]));
    expect(message).toContain(
      "vm-install: cdktf destroy needs TF_VAR_pg_password set (install-postgres's db_password on vms[one], " +
        "install-postgres's db_password on vms[two]); export TF_VAR_pg_password=...\n",
    );
    expect(message).toMatch(/nothing was run$/);
  });
});
