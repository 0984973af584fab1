// install-docker's report tells a check from a run by what the kit applied (ModelRun.applied), never by
// whether a verify ran: a run whose verify did not happen is still a run, a check that verified still a check.
import { dockerModel } from "../../handlers/install-docker/docker-model";

type Run = Parameters<typeof dockerModel.report>[0];

const docker = {
  cli: "27.0.3",
  active: "active",
  enabled: "enabled",
  packages: new Map(),
  group: true,
  groupMembers: [],
  users: new Map(),
  curl: true,
  legacyKeyring: false,
  daemonJson: { kind: "absent" },
};
const seen = { docker, users: [], needs: [{ kind: "service", active: "inactive" }] } as unknown as Run["before"];
const event = { channel: "official", verify: "daemon", compose: false } as unknown as Run["event"];
const started = { kind: "service", what: ["started docker.service"], why: "", apply: async () => undefined };
const runOf = (over: Partial<Run>): Run =>
  ({ event, before: seen, state: seen, planned: [], lastPlan: { changes: [] }, applied: [], ...over }) as Run;

describe("install-docker's report: a check is what applied nothing", () => {
  it("a run that applied a change and has no verify's word is reported as a run", () => {
    const report = dockerModel.report(runOf({ applied: [{ change: started }] }));
    expect(report.summary).toBe("Docker 27.0.3 was installed; its service was not running and now is");
    expect(report.verify.detail).toBe("not verified: the verification did not run after the changes");
  });

  it("a check that verified is reported as the VM the look saw", () => {
    const verified = { server: "27.0.3", detail: "docker info: server version 27.0.3" };
    const report = dockerModel.report(runOf({ planned: [started], verified }));
    expect(report.summary).toBe("Docker 27.0.3 is installed");
  });
});
