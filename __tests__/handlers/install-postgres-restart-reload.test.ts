// A rerun whose changes need the server to read its files again: a narrower allowed_cidrs reloads, a
// listen_addresses waiting for a restart gets one, settings someone else left pending are reported, not
// restarted. The look after the restart rides in the restart's exec and is the login's proof, so a process
// that took the port meanwhile is named and never sent a byte.
import { handler } from "../../handlers/install-postgres/handler";
import { HBA_MARKER } from "../../handlers/install-postgres/pg";
import { grantsWrite } from "./support/grants-steps";
import { listenerStep, ssLine } from "./support/listener-look";
import { PW } from "./support/postgres-password";
import {
  configStep,
  configured,
  DROPIN,
  HBA_FILE,
  installedLook,
  loginStep,
  OPEN_EVENT,
  RECORDED,
  run,
  settledStep,
} from "./support/postgres-steps";
import { runScripted } from "./support/run-scripted";
import { ScriptedRemote, type Step } from "./support/scripted-remote";

describe("install-postgres: reload and restart on a rerun", () => {
  it("narrowing allowed_cidrs: our old line goes, the new one comes, reload (no restart)", async () => {
    const { result, remote } = await run({ ...OPEN_EVENT, allowed_cidrs: ["10.1.2.3/32"] }, [
      ...installedLook(configured(), RECORDED),
      configStep([
        [
          "/etc/postgresql/14/main/pg_hba.conf",
          (stdin) => {
            expect(stdin).not.toContain("10.0.0.0/8");
            expect(
              stdin.endsWith(`hostssl    myapp    app_user    10.1.2.3/32    scram-sha-256    ${HBA_MARKER}\n`),
            ).toBe(true);
          },
        ],
      ]),
      { match: "systemctl reload postgresql@14-main", sudo: true },
      settledStep("*", [], loginStep()),
      grantsWrite((w) =>
        expect((w.postgres as { hba: object }).hba).toEqual({
          [HBA_FILE]: ["hostssl myapp app_user 10.1.2.3/32 scram-sha-256"],
        }),
      ),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      restarted: false,
      reloaded: true,
      revoked: ["pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256"],
    });
    expect(result!.changes).toEqual([
      "pg_hba.conf: hostssl myapp app_user 10.1.2.3/32 scram-sha-256 added",
      "revoked: pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 removed (written by vm-install, " +
        "no longer in the settings)",
    ]);
  });

  /** A rerun whose listen_addresses waits for a restart: the restart, then `after` (the look after it). */
  const pendingListen = (after: Step): Step[] => [
    ...installedLook(configured({ listen_addresses: "localhost", pending_restart: ["listen_addresses"] }), RECORDED),
    configStep([]),
    { match: "systemctl restart postgresql@14-main", sudo: true },
    after,
  ];

  it("a listen_addresses change that is still waiting for a restart is applied", async () => {
    const { result, remote } = await run(OPEN_EVENT, pendingListen(settledStep("*", [], loginStep())));
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      restarted: true,
      changed: true,
      changes: [`listen_addresses 'localhost' -> '*' (${DROPIN})`],
    });
  });

  it("the look after the restart rides in the restart's exec; cut off, it is made on its own (issue 30)", async () => {
    const steps = () => pendingListen(settledStep("*", [], loginStep()));
    const whole = await run(OPEN_EVENT, steps());
    expect(whole.remote.done).toBe(true);
    const restart = whole.remote.sent.filter((c) => c.includes("systemctl restart postgresql@14-main"));
    expect(restart).toHaveLength(1);
    expect(restart[0]).toMatch(/\n\); vmi_status=\$\?; echo\nprintf '%s ' settled; /);
    expect(whole.remote.sent.some((c) => c.startsWith("printf '%s ' settled; "))).toBe(false);
    // A restart whose output came back without the look's frames (a lost connection followed again): its own exec.
    const remote = new ScriptedRemote([...steps(), settledStep("*", [], loginStep())]);
    const cutOff = Object.assign(Object.create(remote), {
      run: async (command: string, opts = {}) => {
        const r = await remote.run(command, opts);
        return command.includes("systemctl restart") ? { ...r, stdout: "" } : r;
      },
    });
    const cut = await runScripted(handler, OPEN_EVENT, [], { connect: async () => cutOff });
    expect(cut.error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.sent.filter((c) => c.startsWith("printf '%s ' settled; "))).toHaveLength(1);
    expect(cut.result).toMatchObject({ restarted: true, changed: true });
  });

  // The look after the restart is the login's proof (issue 30: no look of its own before the login): a process
  // that took the port while the server restarted is named there, and nothing is sent to it.
  it(
    "another process on the port right after the restart: " + "the job fails naming it, no TCP channel opened",
    async () => {
      const squatter = listenerStep("127.0.0.1", {
        ss: [ssLine("127.0.0.1", 4242, "nc")],
        holders: "   4242 mallory nc -lk 127.0.0.1 5432\n",
        tunnel: { password: PW },
      });
      const { error, remote } = await run(OPEN_EVENT, pendingListen(settledStep("*", [], squatter)));
      expect(remote.done).toBe(true);
      expect(error?.message).toMatch(
        new RegExp(
          /127\.0\.0\.1:5432 is not held by the cluster's server: pid 4242, user mallory: /.source +
            /nc -lk 127\.0\.0\.1 5432 listens there/.source,
        ),
      );
      expect(remote.tunnels).toEqual([]);
    },
  );

  it("settings someone else left pending are reported, not restarted", async () => {
    const { result, remote } = await run({ ...OPEN_EVENT, allowed_cidrs: ["10.0.0.0/8", "10.9.0.0/16"] }, [
      ...installedLook(configured(), RECORDED),
      configStep([["/etc/postgresql/14/main/pg_hba.conf"]]),
      { match: "systemctl reload postgresql@14-main", sudo: true },
      settledStep("*", ["shared_buffers"], loginStep()),
      grantsWrite(() => undefined),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.restarted).toBe(false);
    expect(result?.warnings).toEqual([
      "settings changed by someone else wait for a restart of postgresql@14-main: shared_buffers (not " +
        "restarted by this job)",
    ]);
  });
});
