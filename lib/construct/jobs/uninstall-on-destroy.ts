// vms[].onDestroy "uninstall" on the local target: a terraform_data beside each job whose destroy-time
// local-exec runs the same job with state "absent", so `cdktf destroy` takes back what vm-install put
// on a host that lives on. A destroy-time step may only reference `self`: the runner's command line and
// its environment are kept in the resource's input, so nothing secret: the key stays a path and a secret
// its TF_VAR_ name, both read when it runs. No triggers: a job's rerun replaces the job, never this.
import type { Construct } from "constructs";
import type { ITerraformDependable } from "../cdktf";
import { TerraformData } from "./terraform-data";

/** The job an uninstall undoes, the uninstall before it, and the runner's command line and environment for it. */
export interface UninstallProps {
  /** The job: destroyed only after this has run, so the software is there to take back. */
  readonly job: ITerraformDependable;
  /** The previous installer's uninstall on the same VM: destroyed after this one (the reverse of install). */
  readonly previous?: ITerraformDependable;
  /** The runner's command line for the absent run. */
  readonly command: string;
  /** Its environment: the connection and the event without its secrets (the command line names their variables). */
  readonly environment: Record<string, string>;
}

/** `<id>_uninstall`: see the file comment. */
export function uninstallOnDestroy(scope: Construct, id: string, props: UninstallProps): TerraformData {
  const uninstallId = `${id}_uninstall`;
  const names = Object.keys(props.environment);
  const data = new TerraformData(scope, uninstallId, {
    input: { command: props.command, ...props.environment },
    dependsOn: [props.job, ...(props.previous ? [props.previous] : [])],
    provisioners: [
      {
        type: "local-exec",
        when: "destroy",
        command: "${self.input.command}",
        environment: Object.fromEntries(names.map((n) => [n, `\${self.input.${n}}`])),
      },
    ],
  });
  data.overrideLogicalId(uninstallId);
  return data;
}
