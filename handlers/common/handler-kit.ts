// The frame every installer runs in, so each handler file is only its own business:
//   validate the event and the env (nothing touches the network before both pass)
//   -> connect (retry policy from the event's `ssh` key) -> detect the OS
//   -> the installer's own work (inspect, act only where needed, verify)
//   -> its result, plus host_key_sha256, os and timings_ms, which every result carries.
// Any error leaves as one Error whose message names the installer and the phase, scrubbed of secrets.
//
//   export const installer = defineInstaller({
//     name: "install-docker",
//     fields: { compose: optional(boolean(), true), apt: optional(aptEventSettings) },
//     secrets: (event) => ({}),
//     run: async ({ event, remote, os, progress }) => ({ status: "ok", ... }),
//   });
//   export const install = (event: unknown) => runInstaller(installer, event);

import { connect, ConnectOptions, resolveSshRetry, sshEventSettings, SshEventSettings } from "./ssh";
import { ConnectionEnv, readConnectionEnv } from "./connection-env";
import { Remote } from "./exec";
import { detectOs, OsInfo } from "./os-release";
import { Progress } from "./progress";
import { SecretScrubber, secrets as defaultSecrets } from "../../shared/secrets";
import { FieldsOf, object, optional, validate, ValidationError } from "../../shared/validate";

/** What the kit adds to every result. */
export interface CommonResult {
  /** The host key fingerprint seen, "SHA256:..." (pin it with SSH_HOST_KEY_SHA256). */
  host_key_sha256: string;
  os: OsInfo;
  /** Milliseconds per phase (validate, connect, os, the installer's own steps, total). */
  timings_ms: Record<string, number>;
}

/** An open connection as the kit needs it; SshSession is one, tests give a scripted double. */
export interface Connection extends Remote {
  readonly target: string;
  readonly hostKeySha256: string;
  close(): Promise<void>;
}

/** The event keys every installer accepts besides its own. */
export interface CommonEvent {
  /** SSH retry policy (see ssh.ts). */
  ssh?: SshEventSettings;
}

export interface InstallerContext<E> {
  /** The validated event, defaults filled in. */
  event: E & CommonEvent;
  /** The VM. */
  remote: Remote;
  os: OsInfo;
  /** Progress lines and timings: `progress.step(label, fn, timingKey)` lands in timings_ms. */
  progress: Progress;
  /** Register more secret values here (the kit has already registered SSH_KEY and spec.secrets). */
  secrets: SecretScrubber;
  /** "user@host:port". */
  target: string;
  /** The SSH login user (SSH_USER): e.g. the default member of a group the installer sets up. */
  user: string;
}

export interface InstallerSpec<E, R> {
  /** The installer's name: progress tag and error prefix, e.g. "install-packages". */
  name: string;
  /** The event's own keys; the kit adds `ssh`. Unknown keys are rejected. */
  fields: FieldsOf<E>;
  /** Secret values in the event (label -> value), registered before anything can print them. */
  secrets?: (event: E) => Record<string, string | undefined>;
  /** The installer's work, on a connected VM of a supported OS. */
  run(ctx: InstallerContext<E>): Promise<R>;
}

/** Identity helper that gives `spec` its types. */
export function defineInstaller<E, R>(spec: InstallerSpec<E, R>): InstallerSpec<E, R> {
  return spec;
}

/** What runInstaller uses from the outside world; tests replace any of it. */
export interface InstallerDeps {
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default ssh.connect */
  connect?: (target: ConnectionEnv, opts: ConnectOptions) => Promise<Connection>;
  /** Progress output. @default process.stdout */
  write?: (line: string) => void;
  /** @default the process-wide registry */
  secrets?: SecretScrubber;
  now?: () => number;
}

/** An error the kit has already worded (prefix, phase, scrubbed). */
export class InstallerError extends Error {
  constructor(message: string, readonly phase: string) {
    super(message);
    this.name = "InstallerError";
  }
}

/** The event as given: an object, or event_json's string form. */
function eventObject(event: unknown): unknown {
  if (typeof event !== "string") return event ?? {};
  try {
    return JSON.parse(event);
  } catch (err) {
    throw new ValidationError("event", [`(top level): not valid JSON (${(err as Error).message})`]);
  }
}

/** Runs one installer end to end; see the file comment for the phases. */
export async function runInstaller<E, R>(spec: InstallerSpec<E, R>, rawEvent: unknown, deps: InstallerDeps = {}): Promise<R & CommonResult> {
  const secrets = deps.secrets ?? defaultSecrets;
  const now = deps.now ?? Date.now;
  const progress = new Progress(spec.name, { write: deps.write, secrets, now });
  const started = now();
  let phase = "validating the event and the environment";
  let connection: Connection | undefined;
  try {
    // Validate both halves of the input before anything else, and report every problem of both at once.
    const validator = object<E & CommonEvent>({ ...spec.fields, ssh: optional(sshEventSettings) } as FieldsOf<E & CommonEvent>);
    const problems: string[] = [];
    let event: (E & CommonEvent) | undefined;
    let target: ConnectionEnv | undefined;
    try {
      event = validate(validator, eventObject(rawEvent), "event");
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      problems.push(...err.problems.map((p) => `event ${p}`));
    }
    try {
      target = readConnectionEnv(deps.env ?? process.env);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      problems.push(...err.problems.map((p) => `env ${p}`));
    }
    if (problems.length > 0 || !event || !target) throw new ValidationError("invalid input, nothing was done on the VM", problems);
    secrets.add(target.privateKey, "SSH_KEY");
    secrets.add((deps.env ?? process.env).SSH_KEY, "SSH_KEY");
    for (const [label, value] of Object.entries(spec.secrets?.(event) ?? {})) secrets.add(value, label);
    progress.timings.validate = now() - started;

    phase = "connecting over SSH";
    const connectTo = deps.connect ?? connect;
    const options: ConnectOptions = { retry: resolveSshRetry(event.ssh), progress, secrets, now };
    const where = `${target.user}@${target.host}:${target.port}`;
    connection = await progress.step(`ssh ${where}`, () => connectTo(target!, options), "connect");
    progress.info(`host key ${connection.hostKeySha256}${target.hostKeySha256 ? " (matches SSH_HOST_KEY_SHA256)" : " (not pinned: set SSH_HOST_KEY_SHA256 to this to pin it)"}`);

    phase = "detecting the OS";
    const os = await progress.step("reading /etc/os-release", () => detectOs(connection!), "os");
    progress.info(`os: ${os.pretty_name ?? os.id}, treated as ${os.family} ${os.codename}`);

    phase = "installing";
    const result = await spec.run({ event, remote: connection, os, progress, secrets, target: connection.target, user: target.user });

    progress.timings.total = now() - started;
    return { ...result, host_key_sha256: connection.hostKeySha256, os, timings_ms: { ...progress.timings } };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const worded = err instanceof ValidationError ? `${spec.name}: ${message}` : `${spec.name} failed while ${phase}: ${message}`;
    const clean = new InstallerError(secrets.scrub(worded), phase);
    progress.info(`failed after ${((now() - started) / 1000).toFixed(1)}s`);
    throw clean;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}
