// Progress lines on stdout while a job runs, so the platform's log shows where a slow or stuck job is
// (apt waiting for a lock, a big download) long before the result or the error arrives. Every line
// goes through the secret scrubber, then `printable`. Steps also record their duration, which the
// result reports as `timings_ms`.

import { secrets as defaultSecrets, type SecretScrubber } from "../../shared/secrets";

/**
 * Terminal escape sequences, whole: CSI (`ESC [` ... final byte, and its 8-bit form U+009B), OSC, DCS,
 * SOS, PM and APC strings up to their terminator (BEL or `ESC \\`, or the end of the line when there is
 * none, so an unterminated one cannot swallow the lines after it), and two-byte escapes (`ESC c`, `ESC (0`).
 */
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences are exactly what is removed here.
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]?/g;
/**
 * What is left to remove character by character: C0 but newline and tab, DEL, C1, and the bidi controls
 * (marks, embeddings, overrides, isolates) that make a line display in another order than it reads, and
 * the Unicode line separators some terminals break lines at.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are exactly what is removed here.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/**
 * `text` without what a terminal or log viewer would act on instead of showing. Text from the VM
 * (os-release, apt's and psql's stderr, command output) reaches the operator's terminal and Terraform's
 * logs unchanged otherwise: a colour code is harmless, a cleared screen, a rewritten window title or a
 * line reordered by U+202E is not. Newlines and tabs stay. The handler kit applies it where text leaves
 * the handler (progress lines, the error message, the result), so call sites need not.
 */
export function printable(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, "").replace(CONTROL, "");
}

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

  /** One line: "[tag] message". */
  info(message: string): void {
    this.said.push(message);
    this.write(printable(this.secrets.scrub(`[${this.tag}] ${message}`)));
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
