// The changes `extensions` asks for, as plan.ts places them: the packages first (the server is looked at
// again after them), the creation after the restart that loads their libraries, and the lines for those
// left in place. Built from the plan alone (extensions.ts), so a check foresees all of them.

import type { Change } from "../common/installer-model";
import type { PostgresOutcome } from "./apply";
import type { PostgresEvent } from "./decisions";
import { createdLine, type ExtensionPlan, leftLine } from "./extensions";
import { createExtensions, installExtensionPackages } from "./extensions-server";

type ExtensionChange = Change<PostgresEvent, PostgresOutcome> & { kind: "extension-package" | "extensions" };

export function extensionChanges(
  plan: ExtensionPlan,
  db: string,
  port: number,
): { packages: ExtensionChange[]; create: ExtensionChange[]; warnings: string[] } {
  const packages: ExtensionChange[] = plan.packages.length
    ? [
        {
          kind: "extension-package",
          what: plan.packages.map((p) => `package ${p.name} installed (for extension ${p.for.join(", ")})`),
          why: "the server has no such extension: the distribution ships it in a package of its own",
          replan: true,
          apply: (run) => installExtensionPackages(run, port, plan.packages),
        },
      ]
    : [];
  const create: ExtensionChange[] = plan.create.length
    ? [
        {
          kind: "extensions",
          what: plan.create.map((e) => createdLine(e, db)),
          why: `the extensions are not in database ${db}`,
          apply: (run) => createExtensions(run, port, plan.create),
        },
      ]
    : [];
  return { packages, create, warnings: plan.left.map((e) => leftLine(e, db)) };
}
