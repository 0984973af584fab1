// A job's progress kept on the deploying machine (the local target's `.vm-install/<stack>/logs/`): what
// scrolled past in a deploy can be read again, and `npm run status` can point at it. One file per run,
// named by the job and the UTC start time so they sort by age; the oldest go once a job has more than
// LOG_RUNS_KEPT. The lines are the runner's, already scrubbed of the job's secrets; the file is 0600 all
// the same (the progress names hosts, users and packages).
import * as fs from "node:fs";
import * as path from "node:path";
import { LOG_RUNS_KEPT } from "./job-contract";

export class JobLog {
  readonly file: string;
  private readonly fd: number;

  constructor(
    readonly dir: string,
    readonly job: string,
    started: Date = new Date(),
  ) {
    // 20261203T081500123Z: sorts by age, and two runs in one second do not share a file.
    const stamp = started.toISOString().replace(/[-:.]/g, "");
    this.file = path.join(dir, `${job}-${stamp}.log`);
    this.fd = fs.openSync(this.file, "a", 0o600);
    pruneRuns(dir, job);
  }

  line(text: string): void {
    fs.writeSync(this.fd, `${text}\n`);
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/** The log files of `job` in `dir`, oldest first. */
export function jobLogs(dir: string, job: string): string[] {
  const prefix = `${job}-`;
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  // The rest of the name is the stamp: this keeps "vm1-install-docker" from matching "vm1-install-docker-x".
  return names
    .filter((n) => n.startsWith(prefix) && /^\d{8}T\d{9}Z\.log$/.test(n.slice(prefix.length)))
    .sort()
    .map((n) => path.join(dir, n));
}

function pruneRuns(dir: string, job: string): void {
  const logs = jobLogs(dir, job);
  for (const old of logs.slice(0, Math.max(0, logs.length - LOG_RUNS_KEPT))) fs.rmSync(old, { force: true });
}
