// npm run check's closing line names the command that puts drift back: a rerun of each drifting VM's first
// drifting installer (a plain deploy reruns nothing when no setting changed), and a deploy for an edit to
// cdktf.json not deployed yet; never "raise runId" (issue 33 item 4).
import { renderDriftTable } from "../lib/operator/check/drift-table";
import type { DriftRow, DriftState } from "../lib/operator/check/run-checks";

const row = (vm: string, installer: string, state: DriftState): DriftRow => ({
  vm,
  installer,
  state,
  wouldChange: state === "drift" ? ["something"] : [],
  summary: "",
  warnings: [],
});

test("one rerun per drifting VM, from its first drifting installer, in the rows' order", () => {
  const text = renderDriftTable(
    [
      row("web", "install-packages", "in sync"),
      row("web", "install-docker", "drift"),
      row("web", "install-postgres", "drift"),
      row("db", "install-packages", "drift"),
      row("db", "install-postgres", "in sync"),
    ],
    false,
  );
  expect(text.split("\n").at(-1)).toBe(
    "drift: 3 of 5 installers would change something; to put it back: npm run rerun -- web install-docker; " +
      "npm run rerun -- db install-packages (it reruns the installers after it on that VM too); after an edit " +
      "to cdktf.json not yet deployed: npm run deploy",
  );
  expect(text).not.toMatch(/runId/);
});

test("in sync: no command to run", () => {
  expect(
    renderDriftTable([row("web", "install-packages", "in sync")], false)
      .split("\n")
      .at(-1),
  ).toBe("in sync: all 1 installers would change nothing");
});
