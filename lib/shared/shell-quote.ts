// POSIX shell quoting. Every user-given value that reaches a command line on the VM goes through
// `quote`, even after names.ts has checked its shape: the pattern is the first line, the quoting the
// second, so a loosened pattern later can never turn into shell injection.

/**
 * One argument for a POSIX shell: wrapped in single quotes, with each `'` written as `'\''`.
 * Inside single quotes nothing is special (no $, `, \ or globbing), so this is safe for any string.
 * Plain words made only of safe characters are left bare to keep logged commands readable.
 */
export function quote(arg: string): string {
  if (arg !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, "'\\''")}'`;
}

/** A command line from separate arguments, each quoted: `command("apt-get", "install", "-y", pkg)`. */
export function command(...args: string[]): string {
  return args.map(quote).join(" ");
}
