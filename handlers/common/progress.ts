// Progress lines on stdout while a job runs, so the platform's log shows where a slow or stuck job is
// (apt waiting for a lock, a big download) long before the result or the error arrives. Every line
// goes through the secret scrubber, then `printableLine` (lib/shared/printable-text.ts): a line break in text
// from the VM cannot make a progress line of its own. Steps also record how long they took (`timings_ms`).

import { printableLine } from "../../lib/shared/printable-text";
import { secrets as defaultSecrets, type SecretScrubber } from "../../lib/shared/secrets";

export interface ProgressOptions {
  /** Where lines go. @default process.stdout */
  write?: (line: string) => void;
  /** @default the process-wide registry */
  secrets?: SecretScrubber;
  /** Milliseconds clock, replaceable in tests. @default Date.now */
  now?: () => number;
}

/** Seconds with one decimal, as people read durations: "1.4s". */
export function formatDuration(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export class Progress {
  /** Milliseconds per finished step, in the order the steps ran (repeated names add up). */
  readonly timings: Record<string, number> = {};
  /** What info() printed, so a line already said (an installer's own summary) is not said twice. */
  private readonly said: string[] = [];
  private readonly write: (line: string) => void;
  private readonly secrets: SecretScrubber;
  readonly now: () => number;

  /** `tag` prefixes every line, e.g. "install-packages" gives "[install-packages] ...". */
  constructor(
    readonly tag: string,
    opts: ProgressOptions = {},
  ) {
    this.write = opts.write ?? ((line) => process.stdout.write(`${line}\n`));
    this.secrets = opts.secrets ?? defaultSecrets;
    this.now = opts.now ?? Date.now;
  }

  /** One line: "[tag] message", whatever `message` holds. */
  info(message: string): void {
    this.said.push(message);
    this.write(printableLine(this.secrets.scrub(`[${this.tag}] ${message}`)));
  }
  /** Says `message` unless a line beginning with it was already said. */
  once(message: string): void {
    if (!this.said.some((line) => line.startsWith(message))) this.info(message);
  }

  /**
   * Runs `fn` as a named step: "[tag] <label> ..." when it starts, "[tag] <label> ... 1.4s" when it
   * ends, "[tag] <label> ... failed after 1.4s" when it throws (the error itself is the caller's to
   * report). The time is added to `timings[timing ?? label]`.
   */
  async step<T>(label: string, fn: () => Promise<T>, timing?: string): Promise<T> {
    const started = this.now();
    this.info(`${label} ...`);
    const record = () => {
      const ms = this.now() - started;
      const key = timing ?? label;
      this.timings[key] = (this.timings[key] ?? 0) + ms;
      return ms;
    };
    try {
      const result = await fn();
      this.info(`${label} ... ${formatDuration(record())}`);
      return result;
    } catch (err) {
      this.info(`${label} ... failed after ${formatDuration(record())}`);
      throw err;
    }
  }
}

/** `progress.step(...)` when there is a Progress, else just the work: for helpers usable without one. */
export function stepIf<T>(
  progress: Progress | undefined,
  label: string,
  fn: () => Promise<T>,
  timing?: string,
): Promise<T> {
  return progress ? progress.step(label, fn, timing) : fn();
}
