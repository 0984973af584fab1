// The stack's parallelism held by the local jobs themselves (lib/jobs/job-slots.ts): at most N hold a
// slot at once, the next waits until one is given back, and a slot whose runner died is taken over.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { takeJobSlot } from "../../lib/jobs/job-slots";
import { tempDir } from "../support/synth";

const state = <T>(p: Promise<T>) =>
  Promise.race([p.then(() => "taken"), new Promise((r) => setImmediate(() => r("waiting")))]);

test("N slots: the N+1st runner waits, says so once, and takes the slot the moment one is given back", async () => {
  const slots = { count: 2, dir: path.join(tempDir("slots"), "slots") };
  const said: string[] = [];
  const first = await takeJobSlot(slots, (l) => said.push(l));
  const second = await takeJobSlot(slots, (l) => said.push(l));
  expect(said).toEqual([]);
  const third = takeJobSlot(slots, (l) => said.push(l));
  expect(await state(third)).toBe("waiting");
  expect(said).toEqual(["waiting for one of the stack's 2 job slots (parallelism 2)"]);
  first();
  const release = await third;
  expect(fs.readdirSync(slots.dir).sort()).toEqual(["slot-0", "slot-1"]);
  expect(fs.readFileSync(path.join(slots.dir, "slot-0"), "utf8")).toBe(String(process.pid));
  expect((fs.statSync(path.join(slots.dir, "slot-0")).mode & 0o777).toString(8)).toBe("600");
  second();
  release();
  expect(fs.readdirSync(slots.dir)).toEqual([]);
});

test("a slot whose runner is gone (killed while holding it) is taken over", async () => {
  const slots = { count: 1, dir: tempDir("slots-dead") };
  const gone = spawnSync(process.execPath, ["-e", ""]).pid;
  fs.writeFileSync(path.join(slots.dir, "slot-0"), String(gone));
  const release = await takeJobSlot(slots, () => {});
  expect(fs.readFileSync(path.join(slots.dir, "slot-0"), "utf8")).toBe(String(process.pid));
  release();
});

test("stopped while waiting: it gives up, holding nothing", async () => {
  const slots = { count: 1, dir: tempDir("slots-abort") };
  const held = await takeJobSlot(slots, () => {});
  const abort = new AbortController();
  const waiting = takeJobSlot(slots, () => {}, abort.signal);
  abort.abort();
  await expect(waiting).rejects.toThrow("stopped while waiting for a job slot");
  held();
  expect(fs.readdirSync(slots.dir)).toEqual([]);
});
