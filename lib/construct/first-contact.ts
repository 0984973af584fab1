// Trust on first contact for a VM whose host key is neither pinned nor delivered: a probe job reads the
// key, a terraform_data records the first one in state, and the installers require it from then on.
import type { Construct } from "constructs";
import { SSH_RETRY_SETTINGS } from "../shared/ssh-retry";
import { Fn, type ITerraformDependable, TerraformStack, TerraformVariable } from "./cdktf";
import type { VmConfig } from "./config/types";
import { sshEvent } from "./installers/installer-event";
import { HandlerAsset } from "./jobs/handler-asset";
import type { InstallerJob, JobTargetFactory } from "./jobs/job-spec";
import { TerraformData } from "./jobs/terraform-data";
import { ACCEPTED_HOST_KEYS_VARIABLE, hostKeyIds, jobName } from "./resource-names";

/** The handler that reads a VM's host key at first contact (handlers/host-key). */
const HOST_KEY_HANDLER = "host-key";

/** What the probe needs of the VM construct. */
export interface FirstContactProps {
  readonly vm: VmConfig;
  readonly jobTarget: JobTargetFactory;
  readonly runId: number;
  readonly host: { address: string; user: string; port: number };
  /** What the probe runs after: the VM (when the stack creates it) and the previous wave's gate. */
  readonly dependsOn: ITerraformDependable[];
  /** The terraform_data replaced with every new VM. */
  readonly newVm?: InstallerJob;
}

/**
 * The stack's one variable of host keys an operator accepted, by VM name: empty on every deploy, set only
 * by `npm run trust` for the apply that replaces that VM's record.
 */
function acceptedHostKeys(scope: Construct): TerraformVariable {
  const stack = TerraformStack.of(scope);
  const existing = stack.node.tryFindChild(ACCEPTED_HOST_KEYS_VARIABLE) as TerraformVariable | undefined;
  if (existing) return existing;
  const variable = new TerraformVariable(stack, ACCEPTED_HOST_KEYS_VARIABLE, {
    type: "map(string)",
    default: {},
    description:
      "Set by npm run trust only: VM name -> the SHA256 host key fingerprint the operator accepted for it " +
      "(checked on the VM's console)",
  });
  variable.overrideLogicalId(ACCEPTED_HOST_KEYS_VARIABLE);
  return variable;
}

/**
 * Trust on first contact, kept in Terraform state: a probe job reads the VM's host key without
 * authenticating, and a terraform_data records the first key it reports. `ignore_changes` keeps that
 * record through every later deploy (the probe's later reports do not move it), so the installers
 * require the first key until the VM is replaced or a person accepts a new one (`npm run trust`, which
 * replaces this record). A new VM (a new id, whatever the cause) replaces the probe and the record
 * with it: the probe's message is then unknown until it has run on the new VM, so the new record is
 * made after that run, from its report, never from the old VM's. A host of kind "existing" keeps its record.
 */
export function recordHostKey(scope: Construct, props: FirstContactProps) {
  const { vm } = props;
  const ids = hostKeyIds(vm.name);
  const probe = props.jobTarget(scope, ids.probe, {
    name: jobName(vm.name, HOST_KEY_HANDLER),
    asset: HandlerAsset.forHandler(scope, HOST_KEY_HANDLER),
    connection: props.host,
    event: sshEvent(vm),
    secretEvent: {},
    runId: props.runId,
    waitTimeoutSec: (vm.sshRetry?.budgetSec ?? SSH_RETRY_SETTINGS.budgetSec.default) + 60,
    dependsOn: props.dependsOn,
    previous: props.newVm,
  });
  const id = ids.record;
  // No default in the inner lookup: a probe result without a key fails the deploy instead of recording
  // nothing. The key an operator accepted (npm run trust, which gives it for this one apply) comes first:
  // then exactly that key is recorded, whatever answers while the apply runs.
  const seen = Fn.lookup(Fn.jsondecode(probe.message), "host_key_sha256");
  const sha256 = Fn.lookup(acceptedHostKeys(scope).value, vm.name, seen);
  const record = new TerraformData(scope, "host_key", { input: { sha256 }, dependsOn: [probe] });
  record.overrideLogicalId(id);
  record.addOverride("lifecycle.ignore_changes", ["input"]);
  if (props.newVm) record.addOverride("lifecycle.replace_triggered_by", [props.newVm.address]);
  record.addOverride("lifecycle.postcondition", [
    {
      condition: `\${can(regex("^SHA256:[A-Za-z0-9+/]{43}$", self.output.sha256))}`,
      error_message:
        `${vm.name}: the host-key job reported no SHA256 host key fingerprint, so none can be recorded; ` +
        `see ${vm.name}-${HOST_KEY_HANDLER}'s message.`,
    },
  ]);
  return { probe, record, hostKeySha256: record.getStringAttribute("output.sha256") };
}
