// The one result shape every installer reports, whatever it installs: the stack's outputs, `npm run
// status` and `npm run check` read these keys without knowing the installer. Text in it comes from the
// VM, and every field of it is one line (a name, a version, a summary, one change or warning each), so
// every string leaves as one printable line (lib/shared/printable-text.ts).

import { printableLine } from "../../lib/shared/printable-text";
import { checkSummary } from "./check-mode";
import type { Connection } from "./exec";
import type { OsInfo } from "./os-release";

/** What an installer reports; the kit turns it into an InstallerResult. */
export interface InstallerReport {
  /** "ok": everything asked for is in place; "partial": some of it could not be done (see warnings). */
  status: "ok" | "partial";
  /**
   * What this run did on the VM, one line each in words; empty when it changed nothing. In check mode:
   * what it would have done, in the same words a real run would use (the kit reports it as would_change).
   */
  changes: string[];
  /** One line for people reading the Terraform output. */
  summary: string;
  /** What a person should read though the job succeeded. @default [] */
  warnings?: string[];
}

/** The result every installer returns, in this key order, followed by the installer's own fields. */
export interface CommonResult {
  status: InstallerReport["status"];
  /** True when this run changed anything on the VM (as Ansible reports it): `changes` is not empty. */
  changed: boolean;
  changes: string[];
  /** Check mode only (the event's `check: true`): what a real run would change; `changes` is empty. */
  would_change?: string[];
  summary: string;
  warnings: string[];
  /** The host key fingerprint seen, "SHA256:..." (pin it with SSH_HOST_KEY_SHA256). */
  host_key_sha256: string;
  os: OsInfo;
  /** Milliseconds per phase (validate, connect, os, the installer's own steps, total). */
  timings_ms: Record<string, number>;
}

export type InstallerResult<R> = CommonResult & Omit<R, keyof InstallerReport>;

/** What the kit adds to the installer's report: where it ran, and what it did before the installer. */
export interface ResultFrame {
  connection: Pick<Connection, "hostKeySha256">;
  os: OsInfo;
  timings: Record<string, number>;
  /** dpkg repairs made (or, in a check, foreseen) before the installer's apt work: first in changes. */
  repairs: string[];
  check: boolean;
  /** The first boot's warnings (cloud-init's recoverable errors): first in warnings. */
  firstBoot: string[];
}

/** `value` with every string in it (keys too) one printable line: a result carries text from the VM. */
export function printableLines<T>(value: T): T {
  if (typeof value === "string") return printableLine(value) as T;
  if (Array.isArray(value)) return value.map(printableLines) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [printableLine(k), printableLines(v)])) as T;
  }
  return value;
}

/** The one result shape: common keys first, in a fixed order, then the installer's own. */
export function result<R extends InstallerReport>(report: R, frame: ResultFrame): InstallerResult<R> {
  const { status, changes: reported, summary, warnings: ownWarnings = [], ...own } = report;
  const { check } = frame;
  const changes = [...frame.repairs, ...reported];
  const common: CommonResult = {
    status,
    changed: !check && changes.length > 0,
    changes: check ? [] : changes,
    ...(check ? { would_change: changes } : {}),
    summary: check ? checkSummary(changes, summary) : summary,
    warnings: [...frame.firstBoot, ...ownWarnings],
    host_key_sha256: frame.connection.hostKeySha256,
    os: frame.os,
    timings_ms: frame.timings,
  };
  return printableLines({ ...common, ...own }) as InstallerResult<R>;
}
