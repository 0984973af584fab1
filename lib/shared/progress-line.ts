// One line that shows how far a long step has got (the sandbox image build, a deploy). On a terminal it
// is rewritten in place (carriage return, erase line), so the step takes one line however long it runs;
// anywhere else (a pipe, a CI log, `| tee`) it becomes a handful of plain lines with no escape sequence:
// one per stage of the step, each stage's last state, printed as the next stage begins. Node built-ins
// only, no dependency: the sandbox (dev/sandbox/) uses it from a bare checkout.

/** Where a progress line is written: process.stderr, or a test's recorder. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** The terminal's width: a progress line longer than that would wrap and could not be rewritten. */
  columns?: number;
}

/** A long step's progress. */
export interface Progress {
  /**
   * The step's state now (one line of text). `stage` names the part of the step it belongs to: off a
   * terminal one line is printed per stage (its last state, when the next stage begins or the step ends)
   * instead of one per update.
   */
  update(text: string, stage?: string): void;
  /** Ends the progress line: erased on a terminal; off it, the last stage's state is printed. Idempotent. */
  end(): void;
}

/** A line log (one call, one line) that can show a progress line too when it writes to a terminal. */
export interface StepLog {
  (line: string): void;
  /** Present on a terminal: starts the progress line that this log's own lines are printed above. */
  progress?: () => Progress;
}

/** Carriage return, then erase the whole line: what rewrites a progress line in place. */
export const ERASE_LINE = "\r\x1b[2K";

/** `text` cut to `width` characters (an ellipsis marks the cut), so it never wraps. */
function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 3))}...`;
}

/** Off a terminal: the last state of each stage, as a line through `write`, once that stage is over. */
function stagedLines(write: (line: string) => void): Progress {
  let stage: string | undefined;
  let pending: string | undefined;
  const flush = () => {
    if (pending !== undefined) write(pending);
    pending = undefined;
  };
  return {
    update(text, next = "") {
      if (stage !== undefined && next !== stage) flush();
      stage = next;
      pending = text;
    },
    end: flush,
  };
}

/** On a terminal: one line on `stream`, after `prefix`, rewritten on every change. */
function terminalLine(stream: ProgressStream, prefix = ""): Progress & { above(line: string): void } {
  let shown: string | undefined;
  const paint = () =>
    stream.write(`${ERASE_LINE}${clip(`${prefix}${shown}`, Math.max(20, (stream.columns || 80) - 1))}`);
  return {
    update(text) {
      if (text === shown) return;
      shown = text;
      paint();
    },
    above(line) {
      stream.write(`${ERASE_LINE}${prefix}${line}\n`);
      if (shown !== undefined) paint();
    },
    end() {
      if (shown !== undefined) stream.write(ERASE_LINE);
      shown = undefined;
    },
  };
}

/**
 * Lines to `stream`, each after `prefix`. When `tty` (by default: the stream is a terminal) the log can
 * show a progress line (`progress`); while one is shown, the log's lines are printed above it.
 */
export function streamLog(stream: ProgressStream, prefix = "", tty = stream.isTTY === true): StepLog {
  let active: ReturnType<typeof terminalLine> | undefined;
  const log: StepLog = (line) => (active ? active.above(line) : stream.write(`${prefix}${line}\n`));
  if (tty) {
    log.progress = () => {
      active?.end();
      const line = terminalLine(stream, prefix);
      active = line;
      return {
        update: (text) => line.update(text),
        end() {
          line.end();
          if (active === line) active = undefined;
        },
      };
    };
  }
  return log;
}

/**
 * The progress of a step that logs to `log`: its progress line on a terminal, else a line per stage through `log`.
 *
 *     const say = streamLog(process.stderr, "demo: "); // lines; on a terminal, able to show a progress line
 *     const p = progressFor(say);                       // a terminal's progress line, else a line per stage
 *     p.update("12 packages retrieved", "retrieve");    // repainted on a terminal; off it, kept for later
 *     say("a line that stays");                         // printed above the progress line
 *     p.end();                                          // erased on a terminal; off it, the last stage's state
 */
export function progressFor(log: (line: string) => void): Progress {
  return (log as StepLog).progress?.() ?? stagedLines(log);
}

/** A step's progress line when `log` writes to a terminal; off it nothing, for a step whose own lines say enough. */
export function progressLineOnly(log: (line: string) => void): Progress {
  return (log as StepLog).progress?.() ?? { update: () => undefined, end: () => undefined };
}
