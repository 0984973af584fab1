// The kit's model loop (handlers/common/installer-model.ts), with installers made up for the purpose over
// a VM that is a map of keys: inspect only looks, a check stops at the plan, a run applies it, looks and
// plans again after a `replan` change, and a plan that would loop fails naming the change.
import { BOOT_LOOK } from "../../handlers/common/boot-look";
import type { Connection, RunOptions, RunResult } from "../../handlers/common/exec";
import { defineHandler, runHandler } from "../../handlers/common/handler-kit";
import { type Change, type InstallerModel, MAX_REPLANS } from "../../handlers/common/installer-model";
import type { InstallerReport } from "../../handlers/common/installer-result";
import { defineInstallerDefinition } from "../../lib/shared/installer-definition";
import { SecretScrubber } from "../../lib/shared/secrets";
import { type EventOf, setting } from "../../lib/shared/settings";
import { integer } from "../../lib/shared/validate";
import { DEBIAN_12 } from "./support/fixtures";
import { answerLook } from "./support/look-answers";
import { TEST_ENV } from "./support/run-scripted";

/** A made-up installer with nothing about check mode in its definition. */
const definition = defineInstallerDefinition({
  key: "keys",
  handler: "install-keys",
  doc: "sets keys on a pretend VM",
  enabledByDefault: false,
  waitTimeoutSec: 60,
  settings: { level: setting(integer(0, 5), { event: "level", default: 3, doc: "The level wanted." }) },
  result: {},
});
type Event = EventOf<typeof definition.settings>;

/** The VM: `get <key>` reads, `set <key> <value>` writes (marked mutates, as every change must be). */
class KeysVm implements Connection {
  readonly target = "ubuntu@192.0.2.10:22";
  readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`;
  readonly keys = new Map<string, string>();
  readonly log: string[] = [];

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    const ok = (stdout = "") => ({ code: 0, stdout, stderr: "", durationMs: 0 });
    if (command === BOOT_LOOK.script) return ok(answerLook(command, { os_release: DEBIAN_12 }));
    this.log.push(`${opts.mutates ? "change" : "look"}: ${command}`);
    const [verb, key, value] = command.split(" ");
    if (verb === "set") this.keys.set(key, value);
    return ok(verb === "get" ? (this.keys.get(key) ?? "") : "");
  }

  async close(): Promise<void> {}
}

const set =
  (key: string, value: string) =>
  async ({ remote }: { remote: Connection | { run: KeysVm["run"] } }) => {
    await remote.run(`set ${key} ${value}`, { mutates: true });
    return undefined;
  };

/** level: raised one step per change; each raise asks to replan (the next step depends on it). */
const levelModel: InstallerModel<Event, { level: number; rounds: number[] }> = {
  async inspect({ remote, round }) {
    const level = Number((await remote.run("get level")).stdout || "0");
    return { level, rounds: [round] };
  },
  plan: (state, event): Change<Event>[] =>
    state.level < event.level
      ? [
          {
            kind: "raise",
            what: [`raised level to ${state.level + 1}`],
            why: `level is ${state.level}, ${event.level} wanted`,
            replan: true,
            apply: set("level", String(state.level + 1)),
          },
        ]
      : [],
  report: ({ state }) => ({ status: "ok", summary: `level ${state.level}` }),
};

async function run<S>(model: InstallerModel<Event, S>, event: Record<string, unknown>, vm = new KeysVm()) {
  const handler = defineHandler<typeof definition.settings, InstallerReport>({ definition, model });
  const lines: string[] = [];
  const deps = { env: TEST_ENV, connect: async () => vm, write: (l: string) => lines.push(l) };
  const outcome = await runHandler(handler, event, { ...deps, secrets: new SecretScrubber() }).then(
    (result) => ({ result, error: undefined }),
    (error: Error) => ({ result: undefined, error }),
  );
  return { ...outcome, vm, lines };
}

describe("the kit's model: inspect -> plan -> apply", () => {
  it("a check reports the plan's words and changes nothing; the run reports the same words, then nothing", async () => {
    const vm = new KeysVm();
    vm.keys.set("level", "2");
    const check = await run(levelModel, { level: 3, check: true }, vm);
    expect(check.result).toMatchObject({ changed: false, changes: [], would_change: ["raised level to 3"] });
    expect(vm.log).toEqual(["look: get level"]);

    const real = await run(levelModel, { level: 3 }, vm);
    expect(real.result).toMatchObject({ changed: true, changes: check.result!.would_change, summary: "level 3" });
    expect(vm.keys.get("level")).toBe("3");

    const again = await run(levelModel, { level: 3, check: true }, vm);
    expect(again.result).toMatchObject({ would_change: [] });
  });

  it("after a replan change it looks again and plans the rest from what the VM is then", async () => {
    const { result, vm } = await run(levelModel, { level: 3 });
    expect(result!.changes).toEqual(["raised level to 1", "raised level to 2", "raised level to 3"]);
    expect(vm.log).toEqual([
      "look: get level",
      "change: set level 1",
      "look: get level",
      "change: set level 2",
      "look: get level",
      "change: set level 3",
      "look: get level",
    ]);
  });

  it("an inspect that changes the VM fails loudly in a real run too, before any change", async () => {
    const sneaky: InstallerModel<Event, null> = {
      async inspect({ remote }) {
        await remote.run("set level 5", { mutates: true, label: "a change in inspect" });
        return null;
      },
      plan: () => [],
      report: () => ({ status: "ok", summary: "" }),
    };
    const { error, vm } = await run(sneaky, { level: 3 });
    expect(error?.message).toMatch(/^install-keys failed while installing: check mode refused to run "a change in/);
    expect(vm.keys.size).toBe(0);
  });

  it("a change planned again right after it was applied fails, naming it, instead of looping", async () => {
    const stuck: InstallerModel<Event, null> = {
      inspect: async () => null,
      plan: () => [{ kind: "raise", what: ["raised level"], why: "never enough", replan: true, apply: set("x", "1") }],
      report: () => ({ status: "ok", summary: "" }),
    };
    const { error, vm } = await run(stuck, { level: 3 });
    expect(error?.message).toMatch(
      /^install-keys failed while installing: "raise: raised level" is planned again right after it was applied \(a bug in the installer: its plan does not converge; report it\)$/,
    );
    expect(vm.log.filter((l) => l.startsWith("change"))).toHaveLength(1);
  });

  it(`more than ${MAX_REPLANS} looks after replan changes fails, naming the last change`, async () => {
    let n = 0;
    const endless: InstallerModel<Event, null> = {
      inspect: async () => null,
      plan: () => [
        { kind: "bump", what: [`bumped to ${++n}`], why: "always one more", replan: true, apply: set("n", "x") },
      ],
      report: () => ({ status: "ok", summary: "" }),
    };
    const { error, vm } = await run(endless, { level: 3 });
    expect(error?.message).toMatch(new RegExp(`still planning after ${MAX_REPLANS} looks \\(last: bump: bumped to `));
    expect(vm.log.filter((l) => l.startsWith("change"))).toHaveLength(MAX_REPLANS + 1);
  });

  it("an apply that did only part of its change reports what it did, not what was planned", async () => {
    const partial: InstallerModel<Event, null> = {
      inspect: async () => null,
      plan: () => [
        { kind: "two", what: ["set a and b"], why: "", apply: async () => ({ what: ["set a (b was refused)"] }) },
      ],
      report: () => ({ status: "partial", summary: "" }),
    };
    const { result } = await run(partial, { level: 3 });
    expect(result).toMatchObject({ status: "partial", changed: true, changes: ["set a (b was refused)"] });
  });
});
