// What a job process writes: its output lines (scrubbed, streamed to the caller, the last few kept for a
// failure's message) and its result channel (fd 3), where the bootstrap reports the outcome.
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { JobPhase } from "./job-contract";

export type OutputStream = "stdout" | "stderr";

/** A line longer than this is passed on in pieces, so a handler printing without newlines can't exhaust memory. */
const MAX_LINE_CHARS = 64 * 1024;
const MAX_RESULT_BYTES = 64 * 1024 * 1024;
const TAIL_LINES = 20;
const TAIL_CHARS = 4000;

/** Turns a byte stream into lines (without the newline), passing long lines on in pieces. */
function lineReader(stream: Readable, onLine: (line: string) => void): { flush(): void } {
  const decoder = new StringDecoder("utf8");
  let buf = "";
  const emit = (line: string) => onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  stream.on("data", (chunk: Buffer) => {
    buf += decoder.write(chunk);
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      emit(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    while (buf.length > MAX_LINE_CHARS) {
      emit(buf.slice(0, MAX_LINE_CHARS));
      buf = buf.slice(MAX_LINE_CHARS);
    }
  });
  // Errors on a pipe whose process has died carry no information the exit status doesn't.
  stream.on("error", () => undefined);
  return {
    flush() {
      buf += decoder.end();
      if (buf.length > 0) emit(buf);
      buf = "";
    },
  };
}

/**
 * Reads the result channel: newline-separated JSON reports. Unlike output lines these are never split,
 * since a result of some hundred KB is legitimate; past MAX_RESULT_BYTES the channel is ignored.
 */
function readReports(stream: Readable, onReport: (line: string) => void): void {
  let chunks: Buffer[] = [];
  let total = 0;
  stream.on("data", (chunk: Buffer) => {
    total += chunk.length;
    if (total > MAX_RESULT_BYTES) return;
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf(0x0a, start)) >= 0) {
      chunks.push(chunk.subarray(start, nl));
      onReport(Buffer.concat(chunks).toString("utf8"));
      chunks = [];
      start = nl + 1;
    }
    if (start < chunk.length) chunks.push(chunk.subarray(start));
  });
  stream.on("error", () => undefined);
}

/** The last lines of a stream, short enough to go into a message. */
export function tailText(lines: readonly string[]): string {
  let text = lines.slice(-TAIL_LINES).join("\n");
  if (text.length > TAIL_CHARS) text = `...${text.slice(-TAIL_CHARS)}`;
  return text;
}

function keepLast(lines: string[], line: string): void {
  lines.push(line);
  if (lines.length > TAIL_LINES) lines.shift();
}

export interface JobOutput {
  /** The last lines of both streams, for a job that was stopped. */
  readonly outputTail: readonly string[];
  /** The last stderr lines, for a job that died without reporting. */
  readonly stderrTail: readonly string[];
  /** What the caller's onOutput threw first; it is not called again after. */
  readonly callbackError: unknown;
  /** Passes on the last, unterminated line of each stream; call once the process has ended. */
  flush(): void;
}

/** Streams each output line, scrubbed, to onOutput as it comes, keeping the tails. */
export function streamOutput(
  streams: Record<OutputStream, Readable>,
  scrub: (text: string) => string,
  onOutput?: (line: string, stream: OutputStream) => void,
): JobOutput {
  const outputTail: string[] = [];
  const stderrTail: string[] = [];
  let callbackError: unknown;
  const deliver = (stream: OutputStream) => (raw: string) => {
    const line = scrub(raw);
    keepLast(outputTail, line);
    if (stream === "stderr") keepLast(stderrTail, line);
    if (!onOutput || callbackError !== undefined) return;
    try {
      onOutput(line, stream);
    } catch (err) {
      callbackError = err;
    }
  };
  const readers = [lineReader(streams.stdout, deliver("stdout")), lineReader(streams.stderr, deliver("stderr"))];
  return {
    outputTail,
    stderrTail,
    get callbackError() {
      return callbackError;
    },
    flush() {
      for (const r of readers) r.flush();
    },
  };
}

export interface Report {
  readonly phase: JobPhase;
  readonly message: string;
}

/**
 * Watches the result channel for the bootstrap's report: the first well-formed one carrying this run's
 * nonce. `report()` is undefined until it has come.
 */
export function watchForReport(channel: Readable, nonce: string): { report(): Report | undefined } {
  let result: Report | undefined;
  readReports(channel, (line) => {
    if (result) return;
    try {
      const r = JSON.parse(line) as { nonce?: unknown; phase?: unknown; message?: unknown };
      if (r.nonce === nonce && (r.phase === "Succeeded" || r.phase === "Failed") && typeof r.message === "string") {
        result = { phase: r.phase, message: r.message };
      }
    } catch {
      // Not the bootstrap's report: ignore it, the report is still to come.
    }
  });
  return { report: () => result };
}
