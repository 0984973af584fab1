// Terraform run from status, check and trust (not through bin/cdktf) must leave its state owner-only too:
// the state can hold the SSH key and passwords, and Terraform creates it with 0666 & ~umask.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { terraformIn } from "../lib/operator/terraform-cli";

test("terraformIn under umask 000: the state and its .backup Terraform writes are 0600", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-tfcli-"));
  const previous = process.umask(0o000);
  try {
    // terraform_data is built in: no provider to download.
    fs.writeFileSync(
      path.join(dir, "main.tf"),
      'resource "terraform_data" "x" {\n  input = var.v\n}\nvariable "v" {\n  type = string\n}\n',
    );
    for (const args of [
      ["init", "-input=false"],
      ...["one", "two"].map((v) => ["apply", "-input=false", "-auto-approve", `-var=v=${v}`]),
    ]) {
      const r = terraformIn(dir, dir, args);
      expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 0, stderr: "" });
    }
    const mode = (f: string) => (fs.statSync(path.join(dir, f)).mode & 0o777).toString(8);
    expect({ state: mode("terraform.tfstate"), backup: mode("terraform.tfstate.backup") }).toEqual({
      state: "600",
      backup: "600",
    });
  } finally {
    process.umask(previous);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
