// host-key: the first job on every first-contact VM without a pin (existing hosts, and Nubes VMs with
// hostKeys "first-contact"; a Nubes VM's delivered key needs none). It learns the VM's SSH host key and
// stops at the end of the key exchange, before authentication: it is given no private key, so it has
// nothing to send. The
// stack records what it reports in Terraform state (a terraform_data that ignores later reports) and
// every installer job of that VM then requires that key: trust on first contact, remembered until the VM
// itself is replaced. Its own later runs report what the VM presents now, so a changed key is visible in
// its result even before an installer refuses it.

import { secrets as defaultSecrets, type SecretScrubber } from "../../shared/secrets";
import { object, optional, ValidationError, validate } from "../../shared/validate";
import { readHostEnv } from "../common/connection-env";
import { eventObject } from "../common/handler-input";
import { Progress } from "../common/progress";
import {
  type ConnectOptions,
  type HostKeyProbe,
  type HostTarget,
  probeHostKey,
  resolveSshRetry,
  sshEventSettings,
} from "../common/ssh";

export const HANDLER = "host-key";

export interface HostKeyResult {
  status: "ok";
  changed: false;
  changes: string[];
  summary: string;
  warnings: string[];
  /** What the VM presented, "SHA256:..." as ssh-keygen -l prints it. */
  host_key_sha256: string;
  /** Its type, e.g. "ssh-ed25519". */
  host_key_type: string;
  /** Whether SSH_HOST_KEY_SHA256 was given and matched. */
  pinned: boolean;
  timings_ms: Record<string, number>;
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
  const secrets = deps.secrets ?? defaultSecrets;
  const now = deps.now ?? Date.now;
  const progress = new Progress(HANDLER, { write: deps.write, secrets, now });
  const started = now();
  try {
    const event = validate(eventShape, eventObject(rawEvent), "event");
    const target = readHostEnv(deps.env ?? process.env);
    progress.timings.validate = now() - started;
    const where = `${target.host}:${target.port}`;
    const probe = deps.probe ?? probeHostKey;
    const seen = await progress.step(
      `host key of ${where}`,
      () => probe(target, { retry: resolveSshRetry(event.ssh), progress, secrets, now }),
      "probe",
    );
    const pinned = target.hostKeySha256 !== undefined;
    progress.info(
      `${where} presents ${seen.hostKeySha256} (${seen.hostKeyType})${pinned ? ", the pinned key" : ""}; nothing was authenticated`,
    );
    progress.timings.total = now() - started;
    return {
      status: "ok",
      changed: false,
      changes: [],
      summary: `${where} presents host key ${seen.hostKeySha256} (${seen.hostKeyType})`,
      warnings: [],
      host_key_sha256: seen.hostKeySha256,
      host_key_type: seen.hostKeyType,
      pinned,
      timings_ms: { ...progress.timings },
    };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(
      secrets.scrub(
        `${HANDLER}: ${err instanceof ValidationError ? "" : "failed while reading the VM's host key: "}${message}`,
      ),
    );
  }
}

export async function install(event: unknown): Promise<HostKeyResult> {
  return run(event);
}
