// The env_vars of the Job contract, named once: the stack passes exactly these to a job (lib/construct/jobs),
// the handler reads them (handlers/common/connection-env.ts), and its errors list them in this order.

/** Where and how to reach the VM: nothing else from the invoking environment reaches the handler. */
export const JOB_ENV_VARS = [
  "VM_IP",
  "SSH_USER",
  "SSH_KEY",
  "SSH_KEY_SETTING",
  "SSH_PORT",
  "SSH_HOST_KEY_SHA256",
  "SSH_HOST_KEY_SOURCE",
] as const;
export type JobEnvVar = (typeof JOB_ENV_VARS)[number];
