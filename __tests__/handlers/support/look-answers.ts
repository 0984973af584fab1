// A stateful double's side of a vm-facts look (handlers/common/vm-facts.ts): each probe line of the look's
// script answered by the double's own `answer` for that probe's command, framed as the script frames it on a
// VM (name, space, base64 of stdout + "\n" + exit status). The handler's own parser reads it back.

/** What one probe's command prints on the double, and its exit status. */
export interface ProbeAnswer {
  stdout: string;
  code: number;
}

const PROBE_LINE = /^printf '%s ' ([a-z0-9_:.-]+); \{ \((.*)\) <\/dev\/null 2>(?:&1|\/dev\/null); printf /;

/** Whether `command` is a look's script (every line a framed probe). */
export const isLook = (command: string) => command.split("\n").every((l) => PROBE_LINE.test(l));

/** The stdout of the look `script` on a VM whose probes `answer` answers (it throws on one it does not know). */
export function answerLook(script: string, answer: (command: string) => ProbeAnswer): string {
  return script
    .split("\n")
    .map((line) => {
      const m = PROBE_LINE.exec(line);
      if (!m) throw new Error(`answerLook: not a probe line of a look: ${line}`);
      const a = answer(m[2]);
      return `${m[1]} ${Buffer.from(`${a.stdout}\n${a.code}`, "utf8").toString("base64")}\n`;
    })
    .join("");
}
