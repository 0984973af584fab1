import { Apt } from "../../handlers/common/apt";
import { CheckModeViolation, checkSummary, lookOnly } from "../../handlers/common/check-mode";
import { runLong } from "../../handlers/common/exec";
import { ScriptedRemote } from "./support/scripted-remote";

describe("check mode's safety net (lookOnly)", () => {
  it("passes inspection commands through, sudo ones included", async () => {
    const remote = new ScriptedRemote([{ match: "cat /etc/shadow", sudo: true, stdout: "x" }]);
    await expect(lookOnly(remote).run("cat /etc/shadow", { sudo: true })).resolves.toMatchObject({ stdout: "x" });
    expect(remote.done).toBe(true);
  });

  it("refuses a command marked as a change, naming it, before it reaches the VM", async () => {
    const remote = new ScriptedRemote([]);
    await expect(
      lookOnly(remote).run("usermod -aG docker u1", { sudo: true, mutates: true, label: "adding u1 to group docker" }),
    ).rejects.toThrow(new CheckModeViolation("adding u1 to group docker"));
    expect(remote.calls).toHaveLength(0);
  });

  it("refuses every long step (runLong marks them all as changes), detached or not", async () => {
    const remote = new ScriptedRemote([]);
    await expect(
      runLong(lookOnly(remote), "systemctl restart docker.service", { label: "systemctl restart docker.service" }),
    ).rejects.toThrow(/check mode refused to run "systemctl restart docker.service": it would change the VM/);
    const plain = { run: remote.run.bind(remote) };
    await expect(runLong(lookOnly(plain), "apt-get update -q")).rejects.toBeInstanceOf(CheckModeViolation);
    expect(remote.calls).toHaveLength(0);
  });

  it("an Apt in check mode refuses install and remove even if an installer forgot to branch", async () => {
    const apt = new Apt(lookOnly(new ScriptedRemote([])), undefined, { check: true });
    await expect(apt.install(["jq"])).rejects.toBeInstanceOf(CheckModeViolation);
    await expect(apt.remove(["jq"])).rejects.toBeInstanceOf(CheckModeViolation);
  });

  it("summarizes: nothing, one, several, and a long list cut at 300 characters", () => {
    expect(checkSummary([], "nothing to do")).toBe("check: nothing would change; nothing to do");
    expect(checkSummary(["installed jq"], "x")).toBe("check: 1 change would be made: installed jq");
    expect(checkSummary(["a", "b"], "x")).toBe("check: 2 changes would be made: a; b");
    const long = checkSummary(
      Array.from({ length: 40 }, (_, i) => `installed package-number-${i}`),
      "x",
    );
    expect(long).toHaveLength(300);
    expect(long.endsWith("...")).toBe(true);
  });
});
