// Runs an installer through the real handler kit with a scripted double in place of the SSH connection.

import type { Connection } from "../../../handlers/common/exec";
import { type HandlerSpec, type InstallerDeps, runHandler } from "../../../handlers/common/handler-kit";
import type { InstallerReport } from "../../../handlers/common/installer-result";
import { SecretScrubber } from "../../../lib/shared/secrets";
import type { Settings } from "../../../lib/shared/settings";
import { ScriptedRemote, type Step } from "./scripted-remote";

export const TEST_KEY =
  "-----BEGIN OPENSSH PRIVATE " +
  "KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE " +
  "KEY-----\n";
/** The job env the double's VM is reached with. */
export const TEST_ENV = { VM_IP: "192.0.2.10", SSH_USER: "ubuntu", SSH_KEY: TEST_KEY };

/**
 * Runs `handler` on `event` against `script`: the result or the error, every progress line, the
 * double (its calls) and how many times the kit connected (0 when validation stopped it).
 */
export async function runScripted<S extends Settings, R extends InstallerReport>(
  handler: HandlerSpec<S, R>,
  event: unknown,
  script: Step[],
  deps: Partial<InstallerDeps> = {},
) {
  const remote = new ScriptedRemote(script);
  const lines: string[] = [];
  let connects = 0;
  const outcome = await runHandler(handler, event, {
    env: TEST_ENV,
    connect: async () => {
      connects++;
      return remote;
    },
    write: (l) => lines.push(l),
    secrets: new SecretScrubber(),
    ...deps,
  }).then(
    (result) => ({ result, error: undefined }),
    (error: Error) => ({ result: undefined, error }),
  );
  return { ...outcome, remote, lines, connects };
}

/** One job of `handler` on a stateful double (postgres-vm.ts, apt-vm.ts): its result, or what it threw. */
export const jobOn = <S extends Settings, R extends InstallerReport>(
  handler: HandlerSpec<S, R>,
  vm: Connection,
  event: object,
) =>
  runHandler(handler, event, {
    env: TEST_ENV,
    connect: async () => vm,
    write: () => {},
    secrets: new SecretScrubber(),
  });
