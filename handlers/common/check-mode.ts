// Check mode (the event's `check: true`), Ansible's --check for installers: every installer inspects as
// it always does, decides what it would change, and reports that as `would_change` instead of doing it.
// Nothing on the VM changes, not even apt's package lists (no apt-get update).
//
// The installers branch on `ctx.check` at each change they make. This file is the safety net under that:
// in check mode the kit hands them a Remote that refuses every command marked as a change (`mutates` in
// RunOptions, and every long step: runLong marks them all). An installer that forgot to branch then fails
// its check naming the command, instead of changing the VM of someone who asked only to look.

import type { Remote, RunOptions, RunResult } from "./exec";

/** A change attempted in check mode: a bug in the installer, never something the VM caused. */
export class CheckModeViolation extends Error {
  constructor(label: string) {
    super(
      `check mode refused to run "${label}": it would change the VM (this is a bug in the installer: report it; nothing was changed)`,
    );
    this.name = "CheckModeViolation";
  }
}

/** `remote` with every change refused; inspection commands pass through. */
export function lookOnly(remote: Remote): Remote {
  const refuse = (command: string, opts: RunOptions = {}): never => {
    throw new CheckModeViolation(opts.label ?? command.slice(0, 120));
  };
  return {
    run: async (command: string, opts: RunOptions = {}): Promise<RunResult> => {
      if (opts.mutates) refuse(command, opts);
      return remote.run(command, opts);
    },
    runDetached: async (command: string, opts?: RunOptions) => refuse(command, opts),
  };
}

/** The summary of a check: what would change, or that nothing would, in one line. */
export function checkSummary(wouldChange: string[], installerSummary: string): string {
  if (wouldChange.length === 0) return `check: nothing would change; ${installerSummary}`;
  const n = wouldChange.length;
  const all = `check: ${n} change${n === 1 ? "" : "s"} would be made: ${wouldChange.join("; ")}`;
  return all.length > 300 ? `${all.slice(0, 297)}...` : all;
}
