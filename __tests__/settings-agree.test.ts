// Config and handler accept and refuse exactly the same values, for every setting that has both a
// cdktf.json key and an event key: each probe value goes through parseConfig (synth) and through the
// handler's own event check (runHandler, stopped before it would connect).

import { parseConfig } from "../construct/config/parse";
import { INSTALLERS } from "../construct/installers/catalog";
import { type HandlerSpec, runHandler } from "../handlers/common/handler-kit";
import type { InstallerReport } from "../handlers/common/installer-result";
import { handler as dockerHandler } from "../handlers/install-docker/handler";
import { handler as packagesHandler } from "../handlers/install-packages/handler";
import { handler as postgresHandler } from "../handlers/install-postgres/handler";
import { SecretScrubber } from "../shared/secrets";
import type { Setting, Settings } from "../shared/settings";
import { SSH_RETRY_SETTINGS } from "../shared/ssh-retry";
import { TEST_ENV } from "./handlers/support/run-scripted";
import { context } from "./support/synth";

const PROBES: unknown[] = [
  true,
  false,
  null,
  0,
  -1,
  1,
  1.5,
  3,
  29,
  30,
  300,
  301,
  3600,
  86400,
  7 * 86400 + 1,
  30 * 86400,
  30 * 86400 + 1,
  "",
  " ",
  "x",
  "ab",
  "git",
  "git=1:2.39.2-1",
  "git;id",
  "Git",
  "*",
  "localhost",
  "localhost,10.0.0.1",
  "10.0.0.1",
  "10.0.0.0/8",
  "::1/128",
  "10.0.0.0/33",
  "official",
  "distro",
  "hello-world",
  "daemon",
  "15",
  "9",
  "100",
  "myapp",
  "app_user",
  "postgres",
  "all",
  "public",
  "pg_x",
  "a-b",
  "https://download.docker.com/linux",
  "http://mirror.local:8080/pg",
  "ftp://x",
  "https://x/?q=1",
  "https://x/a b",
  "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8",
  "b97b0afcaa1a47f044f244a07fcc7d46accc4cf8",
  "pg_password",
  "Pg",
  "ubuntu",
  "root",
  [],
  ["git"],
  ["git", "git"],
  ["git", "git=1"],
  ["git;id"],
  ["10.0.0.0/8"],
  ["10.0.0.0/8", "10.0.0.0/8"],
  ["bad"],
  ["ubuntu"],
  ["ubuntu", "ubuntu"],
  ["Bad User"],
  {},
  { a: 1 },
];

const HANDLERS: Record<string, HandlerSpec<Settings, InstallerReport>> = {
  "install-packages": packagesHandler as never,
  "install-docker": dockerHandler as never,
  "install-postgres": postgresHandler as never,
};

/** What the stack always sends (eventRequired settings), so a probe of one key is judged on that key alone. */
const BASE_EVENT: Record<string, Record<string, unknown>> = {
  "install-packages": { packages: ["git"] },
  "install-docker": {},
  "install-postgres": { db_name: "myapp", db_user: "app_user", db_password: "correct-horse-battery" },
};

function configAccepts(where: Record<string, unknown>): boolean {
  try {
    parseConfig(context(where));
    return true;
  } catch {
    return false;
  }
}

async function handlerAccepts(handler: string, event: Record<string, unknown>): Promise<boolean> {
  const stop = new Error("validation passed");
  const outcome = await runHandler(HANDLERS[handler], event, {
    env: TEST_ENV,
    connect: async () => {
      throw stop;
    },
    write: () => undefined,
    secrets: new SecretScrubber(),
  }).catch((err: Error) => err);
  if (!(outcome instanceof Error)) throw new Error("the handler ran without connecting");
  return outcome.message.includes(stop.message);
}

const both = (settings: Settings) =>
  Object.entries(settings).filter(
    (entry): entry is [string, Setting & { event: string }] => !!entry[1].event && !entry[1].eventOnly,
  );

describe.each(INSTALLERS.map((def) => [def.handler, def] as const))(
  "%s: config and handler agree on every value",
  (handler, def) => {
    it.each(both(def.settings).map(([key, s]) => [key, s.event] as const))("%s (event %s)", async (key, eventKey) => {
      const verdicts: string[] = [];
      let accepted = 0;
      for (const value of [...PROBES, def.settings[key].default]) {
        if (value === undefined) continue;
        const atSynth = configAccepts({ installers: { [def.key]: { enabled: false, [key]: value } } });
        const inHandler = await handlerAccepts(handler, { ...BASE_EVENT[handler], [eventKey]: value });
        if (atSynth !== inHandler)
          verdicts.push(
            `${JSON.stringify(value)}: synth ${atSynth ? "accepts" : "refuses"}, handler ${inHandler ? "accepts" : "refuses"}`,
          );
        if (atSynth) accepted++;
      }
      expect(verdicts).toEqual([]);
      // Not vacuous: each setting accepts some probe and refuses others.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(PROBES.length);
    });
  },
);

describe("sshRetry (cdktf.json) and ssh (every event) agree on every value", () => {
  it.each(Object.entries(SSH_RETRY_SETTINGS).map(([key, s]) => [key, s.event] as const))(
    "%s (event ssh.%s)",
    async (key, eventKey) => {
      const verdicts: string[] = [];
      for (const value of PROBES) {
        const atSynth = configAccepts({ vms: [{ name: "vm1", sshRetry: { [key]: value } }] });
        const inHandler = await handlerAccepts("install-docker", { ssh: { [eventKey]: value } });
        if (atSynth !== inHandler)
          verdicts.push(
            `${JSON.stringify(value)}: synth ${atSynth ? "accepts" : "refuses"}, handler ${inHandler ? "accepts" : "refuses"}`,
          );
      }
      expect(verdicts).toEqual([]);
    },
  );
});
