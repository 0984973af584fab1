// Benchmark: how many sequential round trips each installer makes over a long link, against the raw ssh
// sequence. A delay proxy (dev/bench/delay-proxy.ts) in front of the sandbox's sshd adds RTT 0 or 50 ms; each
// case runs its four sides (project and raw, at each RTT) rotated every round; round trips = (median at 50
// - median at 0) / 50 ms. Cases: both installers' rerun on a VM each side set up, and a first install on a fresh
// sandbox per run. Writes dev/bench/results/wan.json (`npm run bench:report` makes docs/benchmarks.md's table).
//   npm run bench:wan [-- N]     (N rounds, >= 5, default 5; root, sandbox prerequisites)
import * as fs from "node:fs";
import * as path from "node:path";
import type { Sandbox } from "../sandbox/index";
import { type DelayProxy, startDelayProxy } from "./delay-proxy";
import { rawPackages, rawPostgres, timeRawSteps } from "./raw-sequences";
import { buildResult, commitInfo } from "./results";
import { fmtMs, type Measured, mergeOutcomes, type RoundsOutcome, runRounds, type SideSpec } from "./rounds";
import { type HandlerResult, report, roundsArg, runMain, timeJob, withSandbox, withSandboxes } from "./support";
import {
  CASES,
  RTT_MS,
  RTTS,
  roundTripLines,
  roundTripRows,
  SIDES,
  sideKey,
  type WanCase,
  type WanResult,
  type WanSide,
} from "./wan-figures";

const rounds = roundsArg("wan.ts");
const PACKAGES = ["git", "curl", "jq", "htop", "unzip"];
const PASSWORD = "bench 'pw' \"with\" $quotes \\ and spaces";
const log = (line: string) => process.stdout.write(`${line}\n`);
const NOTE =
  "The load average at the start and the end says how busy the 2-core machine was (other sessions' tests " +
  "widen the spread): the delay's cost is a difference of medians, and a first install's apt-get time (the " +
  "mirror's, untouched by the delay) swings by more than a round trip, so its figure outside apt-get is the " +
  "steadier one.";

const pgEvent = (sb: Sandbox) => ({
  db_name: "shop",
  db_user: "shop_app",
  db_password: PASSWORD,
  listen_addresses: "*",
  allow_remote: true,
  allowed_cidrs: [`${sb.hostAddress}/32`],
});
const rawPg = (sb: Sandbox, rerun: boolean) =>
  rawPostgres({
    db: "shop",
    user: "shop_app",
    password: PASSWORD,
    remoteCidr: `${sb.hostAddress}/32`,
    ...(rerun ? { update: false, rerun: true } : {}),
  });

/** `sb` as a job or `ssh` reaches it through `proxy`: 127.0.0.1:port, with a known_hosts entry for that address. */
function through(sb: Sandbox, proxy: DelayProxy): Sandbox {
  const knownHostsPath = path.join(sb.runDir, `known_hosts.proxy-${proxy.port}`);
  fs.writeFileSync(knownHostsPath, `[127.0.0.1]:${proxy.port} ${sb.hostPublicKey}\n`);
  return { ...sb, address: "127.0.0.1", port: proxy.port, knownHostsPath };
}

/** Runs `fn` against `sb` through a delay proxy of `rttMs`; the TCP connections it opened go into `extra`. */
async function viaProxy(sb: Sandbox, rttMs: number, fn: (via: Sandbox) => Promise<Measured>): Promise<Measured> {
  const proxy = await startDelayProxy({ host: sb.address, port: sb.port, rttMs });
  try {
    const m = await fn(through(sb, proxy));
    return { ms: m.ms, extra: { ...m.extra, connections: proxy.connections } };
  } finally {
    await proxy.close();
  }
}

/** Throws unless the result says the job did nothing (a rerun on a VM it installed). */
function expectNoOp(handler: string, r: HandlerResult): void {
  if (r.status !== "ok" || r.changed || r.restarted)
    throw new Error(`${handler} rerun was not a no-op: ${JSON.stringify({ status: r.status, changes: r.changes })}`);
}

/** One case's work per side: the handler job, or the raw script over one ssh, on the VM given. */
interface CaseWork {
  handler: string;
  event: (sb: Sandbox) => unknown;
  rawScript: (sb: Sandbox) => string;
  /** Rerun: throws unless the job did nothing. First install: throws unless it succeeded. */
  check: (r: HandlerResult) => void;
}

function measure(work: CaseWork, side: WanSide, sb: Sandbox, rttMs: number): Promise<Measured> {
  return viaProxy(sb, rttMs, async (via) => {
    if (side === "raw") {
      const raw = await timeRawSteps(via, work.rawScript(sb), `${work.handler} baseline`);
      return { ms: raw.ms, extra: { steps_ms: raw.steps } };
    }
    const env = { SSH_HOST_KEY_SHA256: sb.hostKeySha256 };
    const job = await timeJob(via, work.handler, work.event(sb), [PASSWORD], env);
    work.check(job.result);
    return { ms: job.ms, extra: { timings_ms: job.result.timings_ms } };
  });
}

/** The four sides of a case (project and raw, at each RTT); `vm(side)` gives the VM a run measures on. */
function caseSides(
  c: WanCase,
  work: CaseWork,
  vm: (side: WanSide, run: (sb: Sandbox) => Promise<Measured>) => Promise<Measured>,
): SideSpec[] {
  return RTTS.flatMap((rtt) =>
    SIDES.map((side) => ({
      name: sideKey(c.name, side, rtt),
      label: `${c.label}, ${side === "project" ? "project" : "raw ssh"}, RTT ${rtt} ms`,
      run: () => vm(side, (sb) => measure(work, side, sb, rtt)),
    })),
  );
}

const WORK: Record<string, CaseWork> = {
  packages: {
    handler: "install-packages",
    event: () => ({ packages: PACKAGES, update: true }),
    rawScript: () => rawPackages(PACKAGES),
    check: (r) => {
      if (r.status !== "ok" || (r.failed as unknown[]).length)
        throw new Error(`install-packages: ${JSON.stringify(r)}`);
    },
  },
  postgres: {
    handler: "install-postgres",
    event: pgEvent,
    rawScript: (sb) => rawPg(sb, false),
    check: (r) => {
      if (r.status !== "ok" || !r.restarted) throw new Error(`install-postgres: ${JSON.stringify(r)}`);
    },
  },
};

/** The rerun work: the same job again (a no-op), and the raw sequences as a rerun does them (no apt-get update). */
const RERUN_WORK: Record<string, CaseWork> = {
  packages: {
    ...WORK.packages,
    rawScript: () => rawPackages(PACKAGES, { update: false }),
    check: (r) => expectNoOp("install-packages", r),
  },
  postgres: { ...WORK.postgres, rawScript: (sb) => rawPg(sb, true), check: (r) => expectNoOp("install-postgres", r) },
};

const caseNamed = (name: string) => CASES.find((c) => c.name === name) as WanCase;

/** Both reruns: one VM per side, set up once by that side without delay (outside every measurement). */
async function rerunRounds(): Promise<RoundsOutcome[]> {
  return withSandboxes(2, async ([projectVm, rawVm]) => {
    log(`setting up: ${projectVm.name} by the installers, ${rawVm.name} by the raw sequences`);
    const env = { SSH_HOST_KEY_SHA256: projectVm.hostKeySha256 };
    await timeJob(projectVm, "install-packages", WORK.packages.event(projectVm), [], env);
    await timeJob(projectVm, "install-postgres", pgEvent(projectVm), [PASSWORD], env);
    await timeRawSteps(rawVm, rawPackages(PACKAGES), "install-packages baseline");
    await timeRawSteps(rawVm, rawPg(rawVm, false), "install-postgres baseline");
    const vm = (side: WanSide, run: (sb: Sandbox) => Promise<Measured>) => run(side === "project" ? projectVm : rawVm);
    const out: RoundsOutcome[] = [];
    for (const kind of ["packages", "postgres"]) {
      const c = caseNamed(`${kind}-rerun`);
      log(`\n${c.label}: ${rounds} rounds`);
      out.push(await runRounds(rounds, caseSides(c, RERUN_WORK[kind], vm), log));
    }
    return out;
  });
}

/** A first install of each installer: every run on its own fresh sandbox. */
async function firstRounds(): Promise<RoundsOutcome[]> {
  const out: RoundsOutcome[] = [];
  for (const kind of ["packages", "postgres"]) {
    const c = caseNamed(`${kind}-first`);
    log(`\n${c.label}: ${rounds} rounds, a fresh sandbox per run`);
    const vm = (_side: WanSide, run: (sb: Sandbox) => Promise<Measured>) => withSandbox(run);
    out.push(await runRounds(rounds, caseSides(c, WORK[kind], vm), log));
  }
  return out;
}

async function main(): Promise<void> {
  const commit = commitInfo();
  log(`wan benchmark: RTT 0 and ${RTT_MS} ms through a delay proxy, ${rounds} rounds per case, sides rotated`);
  const outcome = mergeOutcomes([...(await rerunRounds()), ...(await firstRounds())]);
  const rows = roundTripRows(outcome);
  const sideLabels: Record<string, string> = {};
  for (const c of CASES)
    for (const rtt of RTTS)
      for (const side of SIDES) sideLabels[sideKey(c.name, side, rtt)] = `${c.label}, ${side}, RTT ${rtt} ms`;
  const base = buildResult({
    bench: "wan",
    command: `npm run bench:wan -- ${rounds}`,
    description:
      "A delay proxy on 127.0.0.1 in front of the sandbox's sshd holds each chunk RTT/2 each way " +
      `(RTT 0 or ${RTT_MS} ms). ` +
      "project: the bundled handler through the job runner, SSH_PORT and VM_IP at the proxy, the host key pinned; " +
      "raw: the raw sequence (dev/bench/raw-sequences.ts) as one root script over one `ssh` through the same proxy. " +
      `Reruns: install-packages {${PACKAGES.join(" ")}, update: true} and install-postgres again on a VM the same ` +
      "side set up (raw: apt-get install without update; role, database and pg_hba line only where missing, no " +
      "restart). First installs: each run on its own fresh sandbox.",
    outcome,
    sideLabels,
    comparisons: [],
    commit,
  });
  const result: WanResult = { ...base, rtt_ms: RTT_MS, round_trips: rows, note: NOTE };
  log("");
  for (const l of roundTripLines(rows)) log(l);
  report(result, fmtMs);
}

runMain(main);
