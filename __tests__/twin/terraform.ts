// Real Terraform against the twin providers, in a folder of its own, with the twin's CLI configuration.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { installTwin, type TwinInstallation } from "../../dev/twin/install";
import { tempDir } from "../support/synth";

export interface TfRun {
  code: number;
  output: string;
}

export class TwinTerraform {
  readonly dir = tempDir("twin-tf");
  readonly twin: TwinInstallation = installTwin(path.join(this.dir, ".twin"));

  write(mainTf: string): void {
    fs.writeFileSync(path.join(this.dir, "main.tf"), mainTf);
  }

  /** Terraform's environment: the twin's CLI configuration, no checkpoint calls. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      ...extra,
      TF_CLI_CONFIG_FILE: this.twin.cliConfig,
      CHECKPOINT_DISABLE: "1",
      TF_IN_AUTOMATION: "1",
    };
  }

  run(args: string[], env: Record<string, string> = {}): TfRun {
    const r = spawnSync("terraform", [...args, "-no-color"], {
      cwd: this.dir,
      env: this.env(env),
      encoding: "utf8",
      timeout: 600_000,
    });
    return { code: r.status ?? 1, output: `${r.stdout}${r.stderr}` };
  }

  ok(args: string[], env: Record<string, string> = {}): string {
    const r = this.run(args, env);
    if (r.code !== 0) throw new Error(`terraform ${args.join(" ")} failed (exit ${r.code}):\n${r.output}`);
    return r.output;
  }
}

export const REQUIRED_PROVIDERS = `terraform {
  required_providers {
    nubes = { source = "terra.k8c.ru/nubes/nubes", version = "2.0.0" }
    sless = { source = "sless.kube5s.ru/sless/sless" }
  }
}
`;
