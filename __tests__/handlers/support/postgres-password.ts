// The password install-postgres' scripted tests give the role, made of everything a shell or SQL trips on, and
// the checks that it reaches the VM only as a SCRAM verifier: never on a command line, never in an env.
import type { Call } from "./scripted-remote";

/** Quotes of both kinds, $, backslashes (one and two) and runs of spaces: everything a shell or SQL would trip on. */
export const PW = `it's "q" $HOME \\back\\\\slash  two  spaces`;
/** Fragments of PW that must not show up in any command line, whatever quoting was applied to them. */
const PW_FRAGMENTS = [PW, `"q" $HOME`, "back\\", "two  spaces", "it''s", "it'\\''s"];

/** No command line and no exported variable of any call carries the password in any form. */
export function expectNoPasswordOnCommandLines(calls: Call[], pw = PW, fragments = PW_FRAGMENTS) {
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    for (const f of [pw, ...fragments]) {
      expect(call.command).not.toContain(f);
      for (const v of Object.values(call.opts.env ?? {})) expect(v).not.toContain(f);
      if (call.opts.label) expect(call.opts.label).not.toContain(f);
    }
  }
}

/** The SCRAM secret sent in an apply script (`\set pw '...'`). */
export function sentSecret(calls: Call[]): string | undefined {
  for (const c of calls) {
    const m = /\\set pw '(SCRAM-SHA-256\$[^']+)'/.exec(String(c.opts.stdin ?? ""));
    if (m) return m[1];
  }
  return undefined;
}
