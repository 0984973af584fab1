// Check mode (the event's `check: true`), Ansible's --check: the kit runs the installer's model and stops
// before apply (installer-model.ts), so nothing on the VM changes, not even apt's lists. This file is the
// safety net under that: inspect, and everything in a check, get a Remote that refuses every command
// marked as a change (`mutates`, and every long step), so a look that would change the VM fails loudly.

import type { Remote, RunOptions, RunResult } from "./exec";

/** A change attempted in check mode: a bug in the installer, never something the VM caused. */
export class CheckModeViolation extends Error {
  constructor(label: string) {
    super(
      `check mode refused to run "${label}": it would change the VM (this is a bug in the installer: report it; ` +
        `nothing was changed)`,
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
    // A TCP channel changes nothing on the VM: the login check runs through it in a check too.
    ...(remote.tunnel ? { tunnel: remote.tunnel.bind(remote) } : {}),
  };
}

/** The summary of a check: what would change, or that nothing would, in one line. */
export function checkSummary(wouldChange: string[], installerSummary: string): string {
  if (wouldChange.length === 0) return `check: nothing would change; ${installerSummary}`;
  const n = wouldChange.length;
  const all = `check: ${n} change${n === 1 ? "" : "s"} would be made: ${wouldChange.join("; ")}`;
  return all.length > 300 ? `${all.slice(0, 297)}...` : all;
}
