// What a check foresees of install-postgres' plan (installer-model.ts preview): what apt would say of the
// packages it installs, read through the look-only Apt, and each change's foreseen lines (predictions past
// it), which a run never says since it looks again after that change.

import type { Apt } from "../common/apt";
import { previewInstall } from "../common/ensure-packages";
import type { Note, Plan, Preview } from "../common/installer-model";
import type { Fact } from "../common/vm-facts";
import type { PostgresOutcome } from "./apply";
import { installedLine, type PostgresEvent } from "./decisions";
import { foreseePgdgRepository, pgdgLines, pgdgSettings } from "./pgdg";
import type { PostgresChange, Said } from "./plan-change";
import type { ServerFacts } from "./report";
import type { Run } from "./run";

const mayFail = (f: { name: string; reason: string }): Note => ({
  line: `${f.name} may fail to install: ${f.reason}`,
  warning: true,
});

/** The extensions' packages: each apt would not install, as a warning beside the foreseen change. */
export async function previewPackages(apt: Apt, names: string[]): Promise<Preview> {
  return { notes: (await previewInstall(apt, names)).failed.map(mayFail) };
}

/** PGDG set up as a run sets it up (pgdg.ts), in the run's lines; nothing written. */
export async function previewPgdg(run: Run): Promise<string[]> {
  return pgdgLines(await foreseePgdgRepository(run.remote, run.os, pgdgSettings(run.event), run.progress));
}

/**
 * The server package. From PGDG: the repository's lines as a run's, then the install; PGDG's packages are not in
 * the lists before its source is added, so they are not looked for (the update still looks at dpkg's health: a
 * repair is foreseen). `early`: the first look's word.
 */
export async function previewServerPackage(
  run: Run,
  own: boolean,
  name: string,
  major: string,
  early?: Fact,
): Promise<Preview> {
  const { apt } = run;
  if (!own) {
    const what = [...(await previewPgdg(run)), installedLine(major)];
    await apt.update();
    return { what };
  }
  const outlook = await previewInstall(apt, [name], early);
  const notes = outlook.failed.map((f) => mayFail({ ...f, name }));
  if (!outlook.wouldInstall.length)
    notes.push({
      line:
        `${name} is installed but postgresql-${major} is not: another repository (PGDG?) provides a newer ` +
        `"${name}"; set pg_version to the major you want`,
      warning: true,
    });
  return { notes };
}

/** The plan as the kit takes it, with what the report and the login need of it. */
export interface KitPostgresPlan extends Plan<PostgresEvent, PostgresOutcome> {
  facts: ServerFacts;
  login?: { port: number; listen: string; hbaFile: string; unit: string };
}

/**
 * The plan's lines as notes, said by a run and a check alike; each change's foreseen lines go into its own
 * preview, after the preview's notes, so only a check says them, beside that change and in the plan's order.
 */
export function asKitPlan(plan: {
  changes: PostgresChange[];
  said: Said[];
  facts: ServerFacts;
  login?: KitPostgresPlan["login"];
}): KitPostgresPlan {
  const notes = plan.said.map(({ line, warning }): Note => ({ line, ...(warning ? { warning } : {}) }));
  const changes = plan.changes.map((c) => (c.foreseen?.length ? withNotes(c, c.foreseen) : c));
  return { changes, notes, facts: plan.facts, ...(plan.login ? { login: plan.login } : {}) };
}

function withNotes(change: PostgresChange, notes: readonly Note[]): PostgresChange {
  const own = change.preview;
  return {
    ...change,
    async preview(run) {
      const seen = own ? await own(run) : {};
      return { ...seen, notes: [...(seen.notes ?? []), ...notes] };
    },
  };
}
