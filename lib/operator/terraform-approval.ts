// A command that applies (cdktf deploy or destroy through bin/cdktf, rerun, trust) asks for approval on a
// terminal unless told not to. Without one (piped, CI, nohup) the question cannot be asked: cdktf's UI dies
// with Ink's "Raw mode is not supported" trace, Terraform with "error asking for approval: EOF". Refused
// first, in one line that says what to pass.

/** Whether `args` approve in advance: `-auto-approve`, `--auto-approve`, `=true` spelled out or not. */
function autoApproved(args: readonly string[]): boolean {
  return args.some((a) => /^--?auto-approve(=true)?$/.test(a));
}

/**
 * Why `command` cannot run as given, or undefined: it will ask for approval, none was given in advance, and
 * stdin is not a terminal. `example` is the command line to show, with the flag in it.
 */
export function approvalRefusal(
  args: readonly string[],
  stdinIsTerminal: boolean,
  example: string,
): string | undefined {
  if (stdinIsTerminal || autoApproved(args)) return undefined;
  const line = "stdin is not a terminal, so the approval cannot be asked for: pass the approval in advance";
  return `${line}, as in \`${example}\``;
}
