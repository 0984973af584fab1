// What a test double of the VM needs to read a line as sh on the VM would: commandLine (exec.ts) always
// sends `[sudo -n [-u USER]] sh -c WORD`, WORD the script quoted, or base64 for sh to decode and eval.

export interface WireCommand {
  sudo: boolean;
  user?: string;
  /** The script sh runs: exports first, then the command. */
  script: string;
}

/** The parts of a line commandLine built; throws on anything else (the double was sent something new). */
export function unwrapLine(line: string): WireCommand {
  const m = /^(sudo -n (?:-u (\S+) )?)?sh -c (.*)$/s.exec(line);
  if (!m) throw new Error(`not a commandLine line: ${JSON.stringify(line)}`);
  const word = m[3];
  const encoded = /^'eval "\$\(echo ([A-Za-z0-9+/=]+) \| base64 -d\)"'$/.exec(word);
  const script = encoded
    ? Buffer.from(encoded[1], "base64").toString("utf8")
    : word.startsWith("'")
      ? word.slice(1, -1).replace(/'\\''/g, "'")
      : word;
  return { sudo: !!m[1], user: m[2], script };
}
