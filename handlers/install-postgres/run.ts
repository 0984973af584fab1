// What every phase of an install-postgres run works with, and how a phase leaves a warning.

import type { SecretScrubber } from "../../shared/secrets";
import type { Apt } from "../common/apt";
import type { Remote } from "../common/exec";
import type { OsInfo } from "../common/os-release";
import type { Progress } from "../common/progress";
import type { PostgresEvent } from "./decisions";

export interface Run {
  event: PostgresEvent;
  remote: Remote;
  apt: Apt;
  os: OsInfo;
  progress: Progress;
  secrets: SecretScrubber;
  /** What the run did, one line each (the result's `changes`). */
  changes: string[];
  warnings: string[];
  /** Grants this run took back, one line each (the result's `revoked`). */
  revoked: string[];
  /** The host names of listen_addresses with the addresses the VM resolved them to, all its own (addresses.ts). */
  resolved: Record<string, string[]>;
}

/** A warning for the result, said in the progress too. */
export function warn(run: Run, line: string): void {
  run.warnings.push(line);
  run.progress.info(line);
}
