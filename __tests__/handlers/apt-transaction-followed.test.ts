// An install step and the look at its transaction in one exec (apt-transaction.ts followedStep, issue 30): the
// record comes from the look's frames at the end of the step's output; the step's own output and error carry
// none of them; when the frames did not come back whole the record is read in an exec of its own.
import {
  afterTransactionLook,
  followedStep,
  recordedStep,
  type TransactionRecord,
} from "../../handlers/common/apt-transaction";
import { CommandError, type Remote, type RunOptions, type RunResult } from "../../handlers/common/exec";
import { answerLook, followedParts } from "./support/look-answers";

const RECORD = {
  "apt_tx.before.packages": "ii \tcurl\n",
  "apt_tx.status": "status: jq: installed\nstatus: libjq1: installed\n",
};
const APT_SAID = "Setting up jq (1.6-2.1) ...\n";

/** A VM whose install prints `APT_SAID` and exits `code`; `whole`: the look's frames come back (else cut off). */
function vm(code: number, whole: boolean) {
  const sent: string[] = [];
  const remote: Remote = {
    run: async (command: string, opts: RunOptions = {}): Promise<RunResult> => {
      sent.push(command);
      const parts = followedParts(command);
      const look = answerLook(parts ? parts.look : command, RECORD);
      const stdout = parts ? `${APT_SAID}\n${whole ? look : look.slice(0, 20)}` : look;
      const r = { code: parts ? code : 0, stdout, stderr: "", durationMs: 1 };
      if (r.code !== 0 && opts.check !== false) throw new CommandError("unchecked", command, r.code, stdout, "", 1);
      return r;
    },
  };
  return { remote, sent };
}

async function install(code: number, whole: boolean) {
  const { remote, sent } = vm(code, whole);
  const records: TransactionRecord[] = [];
  const recorder = { probes: [], record: async (added: TransactionRecord) => void records.push(added) };
  const step = followedStep(remote, "apt-get install -y jq", { label: "apt-get install jq" }, recorder.probes);
  const outcome = await recordedStep(remote, step.run, recorder, "apt-get install", [], step.answered).then(
    (r) => ({ stdout: r.result.stdout }),
    (error: CommandError) => ({ error }),
  );
  return { outcome, records, sent };
}

const JQ = { packages: ["jq", "libjq1"], groups: [], users: [] };

describe("an install and the look at its transaction in one exec", () => {
  it("the record comes from the install's exec; the step's output is apt's alone", async () => {
    const { outcome, records, sent } = await install(0, true);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain(afterTransactionLook().script);
    expect(outcome).toEqual({ stdout: APT_SAID });
    expect(records).toEqual([JQ]);
  });

  it("frames cut off: the record is read in an exec of its own", async () => {
    const { outcome, records, sent } = await install(0, false);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(afterTransactionLook().script);
    expect(records).toEqual([JQ]);
    expect("stdout" in outcome && outcome.stdout.startsWith(APT_SAID)).toBe(true);
  });

  it("apt-get fails: the error is apt's, without the frames, and what dpkg did is still recorded", async () => {
    const { outcome, records, sent } = await install(100, true);
    expect(sent).toHaveLength(1);
    const error = "error" in outcome ? outcome.error : undefined;
    expect(error).toBeInstanceOf(CommandError);
    expect({ code: error?.code, stdout: error?.stdout, message: error?.message }).toEqual({
      code: 100,
      stdout: APT_SAID,
      message: `apt-get install jq failed (exit 100):\n${APT_SAID.trim()}`,
    });
    expect(records).toEqual([JQ]);
  });
});
