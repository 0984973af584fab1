// host-key: the first job on every first-contact VM without a pin (existing hosts, Nubes VMs with hostKeys
// "first-contact"). It learns the VM's SSH host key and stops at the end of the key exchange, before
// authentication: it is given no private key, so it has nothing to send. The stack records what it
// reports (trust on first contact, kept until the VM is replaced), and every installer job of that VM
// then requires that key. It runs in the kit's frame: the same progress lines, scrubbing, error wording
// and result keys as an installer (installer-result.ts), but no session, so no os.

import type { SecretScrubber } from "../../lib/shared/secrets";
import { object, optional, validate } from "../../lib/shared/validate";
import type { HostTarget } from "../common/connection-env";
import { readHostEnv } from "../common/connection-env";
import { eventObject } from "../common/handler-input";
import { startJob, worded } from "../common/handler-kit";
import type { CommonResult } from "../common/installer-result";
import { printableLines } from "../common/installer-result";
import { type ConnectOptions, type HostKeyProbe, probeHostKey } from "../common/ssh";
import { resolveSshRetry, sshEventSettings } from "../common/ssh-retry-policy";

const HANDLER = "host-key";

/** The common result keys but os (nothing is logged in to read it), then the key's own. */
export interface HostKeyResult extends Omit<CommonResult, "os" | "would_change"> {
  status: "ok";
  changed: false;
  /** Its type, e.g. "ssh-ed25519". */
  host_key_type: string;
  /** Whether SSH_HOST_KEY_SHA256 was given and matched. */
  pinned: boolean;
}

export interface HostKeyDeps {
  env?: NodeJS.ProcessEnv;
  probe?: (target: HostTarget, opts: ConnectOptions) => Promise<HostKeyProbe>;
  write?: (line: string) => void;
  secrets?: SecretScrubber;
  now?: () => number;
}

const eventShape = object<{ ssh?: Parameters<typeof resolveSshRetry>[0] }>({ ssh: optional(sshEventSettings) });

export async function run(rawEvent: unknown, deps: HostKeyDeps = {}): Promise<HostKeyResult> {
  const job = startJob(HANDLER, deps);
  const { progress, secrets, now } = job;
  try {
    job.phase = "validating the event and the environment";
    const event = validate(eventShape, eventObject(rawEvent), "event");
    const target = readHostEnv(deps.env ?? process.env);
    progress.timings.validate = now() - job.started;
    job.phase = "reading the VM's host key";
    const where = `${target.host}:${target.port}`;
    const probe = deps.probe ?? probeHostKey;
    const seen = await progress.step(
      `host key of ${where}`,
      () => probe(target, { retry: resolveSshRetry(event.ssh), progress, secrets, now }),
      "probe",
    );
    const pinned = target.hostKeySha256 !== undefined;
    const pin = pinned ? ", the pinned key" : "";
    progress.info(`${where} presents ${seen.hostKeySha256} (${seen.hostKeyType})${pin}; nothing was authenticated`);
    progress.timings.total = now() - job.started;
    return printableLines({
      status: "ok",
      changed: false,
      changes: [],
      summary: `${where} presents host key ${seen.hostKeySha256} (${seen.hostKeyType})`,
      warnings: [],
      host_key_sha256: seen.hostKeySha256,
      timings_ms: { ...progress.timings },
      host_key_type: seen.hostKeyType,
      pinned,
    });
  } catch (err) {
    throw worded(job, err);
  }
}

export async function install(event: unknown): Promise<HostKeyResult> {
  return run(event);
}
