// What install-docker added to group docker it takes back when users stops listing them, and only that: the
// grants inventory records the members vm-install added (not those already in the group), a member gone by hand
// is forgotten so a later grant is the admin's, joining and leaving are one command, and a damaged inventory
// stops the run before any change.
import { groupMembers } from "../../handlers/install-docker/docker-state";
import { planGroup } from "../../handlers/install-docker/service-and-group";
import { hello, info, look, os, run, running, usermod } from "./support/docker-steps";
import { grantsRead, grantsWrite } from "./support/grants-steps";

describe("install-docker: what it granted, it takes back (inventory in /var/lib/vm-install/grants.json)", () => {
  /** Docker running, `names` in group docker, of the users ubuntu and deploy. */
  const members = (...names: string[]) =>
    running({
      group: names,
      users: Object.fromEntries(["ubuntu", "deploy"].map((u) => [u, names.includes(u) ? [u, "docker"] : [u]])),
    });

  it(
    "a member vm-install added and users no longer lists leaves the group; the inventory forgets them, other " +
      "installers' records and the daemon.json record kept",
    async () => {
      // The file holds the key as vm-install wrote it: the record holds, and is kept.
      const daemonJson = { debug: true };
      const inventory = {
        version: 1,
        docker: { group_members: ["ubuntu", "deploy"], daemon_json: daemonJson },
        postgres: { roles: [{ cluster: "15/main", name: "a" }] },
      };
      const withFile = look(members("ubuntu", "deploy"));
      withFile.facts = { ...withFile.facts, daemon_json: JSON.stringify(daemonJson) };
      const event = { users: ["ubuntu"], log_rotation: false, daemon_config: daemonJson };
      const { result, remote, error } = await run(event, [
        os(),
        withFile,
        grantsRead(inventory),
        info(), // the daemon is asked in the look, before any change
        { match: /^gpasswd -d deploy docker$/, sudo: true },
        grantsWrite((w) => {
          expect(w.docker).toEqual({ group_members: ["ubuntu"], daemon_json: daemonJson });
          expect(w.postgres).toEqual(inventory.postgres);
        }),
        hello,
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result).toMatchObject({
        changed: true,
        changes: ["revoked: removed deploy from group docker (added by vm-install, no longer in users)"],
        users_added: [],
        revoked: ["group docker: deploy"],
      });
    },
  );

  it("a member vm-install did not add (not in the inventory) is never removed, whatever users says", async () => {
    const { result, remote, error } = await run({ users: ["ubuntu"] }, [
      os(),
      look(members("ubuntu", "deploy")),
      grantsRead({ version: 1, docker: { group_members: [] } }),
      info(),
      hello,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.some((c) => c.command.includes("gpasswd"))).toBe(false);
    expect(result).toMatchObject({ changed: false, changes: [], revoked: [] });
  });

  it("a user already in the group when first listed is not recorded; one it adds is", async () => {
    const { result, remote } = await run({ users: ["ubuntu", "deploy"] }, [
      os(),
      look(members("ubuntu")),
      grantsRead(),
      info(), // the daemon is asked in the look, before any change
      usermod(["deploy"]),
      grantsWrite((w) =>
        expect(w).toEqual({ version: 1, about: expect.any(String), docker: { group_members: ["deploy"] } }),
      ),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({ users_added: ["deploy"], revoked: [] });
  });

  it("joining and leaving in one command; a recorded user gone from the group is simply forgotten", async () => {
    const { result, remote } = await run({ users: ["deploy"] }, [
      os(),
      look(members("ubuntu")),
      grantsRead({ version: 1, docker: { group_members: ["ubuntu", "olduser"] } }),
      info(), // the daemon is asked in the look, before any change
      // olduser left the group since: forgotten first, so a later grant by hand is never revoked.
      grantsRead({ version: 1, docker: { group_members: ["ubuntu", "olduser"] } }),
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["ubuntu"] })),
      { match: /^usermod -aG docker deploy && gpasswd -d ubuntu docker$/, sudo: true },
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["deploy"] })),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(result!.revoked).toEqual(["group docker: ubuntu"]);
    expect(result!.changes[0]).toMatch(/^forgot: olduser in group docker \(not a member now/);
  });

  it("a damaged inventory fails the run before any change, saying how to recover", async () => {
    const { error, remote } = await run({ users: ["ubuntu"] }, [
      os(),
      look(members("ubuntu", "deploy")),
      grantsRead("{not json\n"),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      new RegExp(
        /\/var\/lib\/vm-install\/grants\.json on the VM is not valid JSON /.source +
          /.*remove it to make the project forget what it granted/.source,
      ),
    );
  });

  it("the group's members come from getent", () => {
    expect(groupMembers("docker:x:999:ubuntu,deploy")).toEqual(["ubuntu", "deploy"]);
    expect(groupMembers("docker:x:999:")).toEqual([]);
    expect(planGroup({ groupMembers: ["a", "b"], users: new Map([["a", ["docker"]]]) }, ["a"], ["b"])).toEqual({
      add: [],
      revoke: ["b"],
      record: [],
    });
  });
});
