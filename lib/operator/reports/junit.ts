// JUnit XML as CI systems read it (Jenkins' junit/xUnit plugins, GitLab's test reports): the Surefire/Ant
// shape the "JUnit 10" schema describes (__tests__/fixtures/junit/jenkins-junit.xsd). One <testsuite> per VM
// rather than per command: Jenkins and GitLab both total failures and time per suite, so a broken VM
// stands out as one red suite, while classname = VM keeps Jenkins' per-class view grouped the same way.
// Every text is the VM's word: scrubbed (again: the handlers scrub already), made printable (an attribute
// one line, an element's text a line per item: lib/shared/printable-text.ts), then escaped for XML 1.0.
import * as fs from "node:fs";
import * as path from "node:path";
import { makeScrubber } from "../../jobs/run-job";
import { printable, printableLine } from "../../shared/printable-text";

export interface NotPassed {
  kind: "failure" | "error" | "skipped";
  type: string;
  message: string;
  detail?: string;
}

export type CaseOutcome = { kind: "passed" } | NotPassed;

export interface JunitCase {
  /** The VM: Jenkins shows it as the class, GitLab as the case's suite and class. */
  classname: string;
  /** The installer. */
  name: string;
  timeMs?: number;
  outcome: CaseOutcome;
  /** Extra lines a person reads under the case (summary, warnings, where the log is). */
  systemOut?: string;
}

export interface JunitReport {
  /** The command that produced it, e.g. "vm-install check". */
  title: string;
  cases: JunitCase[];
  /** ISO time the report was made. */
  timestamp: string;
  /** Values that must never be written out, whatever a row holds. */
  secrets?: readonly string[];
}

// XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]; the rest cannot
// appear even escaped, so a control character from a VM's output is shown as U+FFFD instead.
const CONTROL = "[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF]";
const LONE_SURROGATE = "[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]";
const NOT_XML_CHAR = new RegExp(`${CONTROL}|${LONE_SURROGATE}`, "g");

/** `text` safe inside an element or a double-quoted attribute. */
export function xmlText(text: string): string {
  return text
    .replace(NOT_XML_CHAR, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")
    .replace(/\r/g, "&#13;")
    .replace(/\t/g, "&#9;");
}

/** An attribute value: newlines kept as character references, or parsers fold them into spaces. */
function attr(text: string): string {
  return xmlText(text).replace(/\n/g, "&#10;");
}

/** Seconds as the schema's SUREFIRE_TIME pattern takes them (no exponent, no grouping). */
function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

/** How a report's texts are written: an attribute as one line, an element's text with its lines. */
interface Writer {
  attr: (text: string) => string;
  text: (text: string) => string;
}

/** The secrets scrubbed first: a secret with a line break (a key) is matched before the breaks are marked. */
function writer(secrets: readonly string[]): Writer {
  const scrub = makeScrubber(secrets);
  return { attr: (t) => attr(printableLine(scrub(t))), text: (t) => xmlText(printable(scrub(t))) };
}

function caseXml(c: JunitCase, w: Writer): string[] {
  const time = c.timeMs === undefined ? "" : ` time="${seconds(c.timeMs)}"`;
  const open = `    <testcase classname="${w.attr(c.classname)}" name="${w.attr(c.name)}"${time}`;
  const inner: string[] = [];
  const o = c.outcome;
  if (o.kind !== "passed") {
    const head = `<${o.kind} type="${w.attr(o.type)}" message="${w.attr(o.message)}"`;
    inner.push(o.detail ? `      ${head}>${w.text(o.detail)}</${o.kind}>` : `      ${head}/>`);
  }
  if (c.systemOut) inner.push(`      <system-out>${w.text(c.systemOut)}</system-out>`);
  return inner.length ? [`${open}>`, ...inner, "    </testcase>"] : [`${open}/>`];
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  ms: number;
}

function counts(cases: JunitCase[]): Counts {
  const of = (kind: CaseOutcome["kind"]) => cases.filter((c) => c.outcome.kind === kind).length;
  const ms = cases.reduce((sum, c) => sum + (c.timeMs ?? 0), 0);
  return { tests: cases.length, failures: of("failure"), errors: of("error"), skipped: of("skipped"), ms };
}

function countAttrs(n: Counts): string {
  return `tests="${n.tests}" failures="${n.failures}" errors="${n.errors}"`;
}

/** The report as a JUnit XML document; suites in the order their VMs first appear. */
export function renderJunit(report: JunitReport): string {
  const w = writer(report.secrets ?? []);
  const vms = [...new Set(report.cases.map((c) => c.classname))];
  const all = counts(report.cases);
  const root = `<testsuites name="${w.attr(report.title)}" ${countAttrs(all)} time="${seconds(all.ms)}">`;
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', root];
  for (const vm of vms) {
    const cases = report.cases.filter((c) => c.classname === vm);
    const n = counts(cases);
    const when = `skipped="${n.skipped}" time="${seconds(n.ms)}" timestamp="${w.attr(report.timestamp)}"`;
    const open = `  <testsuite name="${w.attr(vm)}" ${countAttrs(n)} ${when}>`;
    lines.push(open, ...cases.flatMap((c) => caseXml(c, w)), "  </testsuite>");
  }
  lines.push("</testsuites>", "");
  return lines.join("\n");
}

/**
 * Writes `text` to `file` whole or not at all: a temporary file beside it, then a rename, so a CI step
 * reading the report never sees half of one. Mode 0644: a report is for reading by the CI agent's user.
 * Throws saying which path failed and what to do.
 */
export function writeReportFile(file: string, text: string): void {
  const target = path.resolve(file);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  try {
    fs.writeFileSync(temp, text, { mode: 0o644 });
    fs.chmodSync(temp, 0o644);
    fs.renameSync(temp, target);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    const what = "give a path in a folder that exists and you may write to";
    throw new Error(`cannot write the JUnit report to ${target} (${why}): ${what}`);
  }
}
