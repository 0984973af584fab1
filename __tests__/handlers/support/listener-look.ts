// The login check's look at who listens on the PostgreSQL port (install-postgres/listener.ts), answered as
// the VM would: ss's lines, the cluster unit's MainPID and ps's names, framed as vm-facts frames them.
import type { Step, TunnelAnswer } from "./scripted-remote";

/** The postmaster's pid in these doubles. */
export const POSTMASTER_PID = 812;

/** One frame as vm-facts' look script prints it: name, then base64 of the output, a newline and the status. */
function frame(name: string, text: string, code = 0): string {
  return `${name} ${Buffer.from(`${text}\n${code}`).toString("base64")}\n`;
}

/** An ss -Hltnp line for `address` (IPv6 bracketed) on port 5432 held by `pid` named `comm`. */
export function ssLine(address: string, pid = POSTMASTER_PID, comm = "postgres", port = 5432): string {
  const local = address.includes(":") ? `[${address}]` : address;
  return `LISTEN 0      244    ${local}:${port}      ${address.includes(":") ? "[::]" : "0.0.0.0"}:*    users:(("${comm}",pid=${pid},fd=6))`;
}

/**
 * The look's step: `ss` (lines, default the postmaster on host), MainPID (default the postmaster), ps's
 * names and the holders' parents; `tunnel` says what the TCP channel opened after it answers.
 */
export function listenerStep(
  host: string,
  opts: {
    ss?: string[];
    mainPid?: string;
    holders?: string;
    parents?: string;
    tunnel?: TunnelAnswer;
    port?: number;
  } = {},
): Step {
  const port = opts.port ?? 5432;
  const ss = opts.ss ?? [ssLine(host, POSTMASTER_PID, "postgres", port)];
  return {
    match: `ss -Hltnp "sport = :${port}"`,
    sudo: true,
    stdout:
      frame("listeners", ss.map((l) => `${l}\n`).join("")) +
      frame("main_pid", `${opts.mainPid ?? POSTMASTER_PID}`) +
      frame("holders", opts.holders ?? `  ${POSTMASTER_PID} postgres /usr/lib/postgresql/14/bin/postgres -D ...\n`) +
      frame("parents", opts.parents ?? `${POSTMASTER_PID}       1\n`),
    tunnel: opts.tunnel,
  };
}
