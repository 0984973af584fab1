// npm run check's parts: which jobs it sends where (from cdktf.json and the deployed outputs), running
// them through the job runner against an in-process SSH server, the drift table and the exit code. The
// whole command against a deployed sandbox is in the deploy e2e.
import * as fs from "node:fs";
import * as path from "node:path";
import { BOOT_LOOK } from "../handlers/common/boot-look";
import { DPKG_HEALTH_LOOK } from "../handlers/common/dpkg-health";
import { parseConfig } from "../lib/construct/config/parse";
import { type CatalogEntry, INSTALLERS } from "../lib/construct/installers/catalog";
import { checkTargets } from "../lib/operator/check/check-targets";
import { renderDriftTable } from "../lib/operator/check/drift-table";
import { type DriftRow, exitCode, rowFromMessage, runChecks } from "../lib/operator/check/run-checks";
import { projectFolder } from "../lib/operator/terraform-cli";
import { helloDefinition } from "./fixtures/installers/install-hello/definition";
import { answerLook, probeNames } from "./handlers/support/look-answers";
import { startServer } from "./handlers/support/ssh-server";
import { testKey } from "./handlers/support/test-keys";
import { unwrapLine } from "./handlers/support/wire";
import { context, tempDir } from "./support/synth";
import { HOSTILE, hostileResult, NOT_ONE_PRINTABLE_LINE, OWN_COLOURS, stringsIn } from "./support/vm-says";

const PIN = `SHA256:${"p".repeat(43)}`;
const RECORDED = `SHA256:${"r".repeat(43)}`;

function config(
  vms: unknown[],
  installers: Record<string, unknown> = {},
  catalog: readonly CatalogEntry[] = INSTALLERS,
) {
  return parseConfig(context({ jobTarget: "local", vms, installers }), catalog);
}

describe("check targets: from cdktf.json and the deployed outputs", () => {
  const cfg = config(
    [
      {
        name: "web-1",
        kind: "existing",
        address: "10.0.0.5",
        hostKeySha256: PIN,
        installers: { docker: { enabled: false } },
      },
      { name: "db", kind: "existing", address: "10.0.0.6", user: "admin", sshPort: 2222, privateKeyPath: "keys/db" },
      { name: "new", kind: "existing", address: "10.0.0.7" },
    ],
    { postgres: { enabled: true, passwordVariable: "pg_pw" } },
  );
  const outputs = {
    web_1_address: "10.0.0.5",
    web_1_host_key_sha256: PIN,
    db_address: "10.0.0.6",
    db_host_key_sha256: RECORDED,
  };
  const targets = checkTargets(cfg, outputs, (p) => path.resolve("/project", p));

  test("each VM's connection: address and host key from the state (a pin from cdktf.json), the rest from cdktf.json", () => {
    expect(targets[0]).toMatchObject({
      vm: "web-1",
      env: { VM_IP: "10.0.0.5", SSH_USER: "ubuntu", SSH_PORT: "22", SSH_HOST_KEY_SHA256: PIN },
    });
    expect(targets[1]).toMatchObject({
      vm: "db",
      env: { VM_IP: "10.0.0.6", SSH_USER: "admin", SSH_PORT: "2222", SSH_HOST_KEY_SHA256: RECORDED },
      keyFile: "/project/keys/db",
    });
    // The key named as cdktf.json names it, for the job's messages (the file itself stays a path).
    expect(targets[1].env.SSH_KEY_SETTING).toBe("vms[db].privateKeyPath (keys/db)");
    expect(targets[0].problem).toBeUndefined();
    expect(targets[1].problem).toBeUndefined();
  });

  test("each job: the deploy's own event with check: true, secrets named by their TF_VAR_ variable only", () => {
    const [packages, postgres] = targets[0].jobs;
    expect(targets[0].jobs.map((j) => j.installer)).toEqual(["install-packages", "install-postgres"]);
    expect(targets[0].skipped).toEqual(["install-docker"]);
    expect(packages).toMatchObject({
      name: "web-1-install-packages-check",
      event: { check: true, time_budget_sec: 585 },
    });
    expect(packages.event).not.toHaveProperty("cache_valid_sec");
    // The second enabled installer on a VM takes the first one's fresh lists, as in the deploy.
    expect(postgres.event).toMatchObject({ check: true, cache_valid_sec: 900, db_name: "myapp", db_user: "app_user" });
    expect(postgres.event).not.toHaveProperty("db_password");
    expect(postgres.secretEnv).toEqual([{ field: "db_password", variable: "TF_VAR_pg_pw" }]);
  });

  test("a VM the state does not show, or shows without a host key, is a problem named with what to do", () => {
    expect(targets[2].problem).toBe("new is not in the deployed state: deploy it first (npm run deploy)");
    const noKey = checkTargets(cfg, { ...outputs, new_address: "10.0.0.7" }, (p) => p)[2];
    expect(noKey.problem).toMatch(/^the deployed state shows no host key for new .*run npm run deploy$/);
  });
});

describe("running the checks through the job runner", () => {
  const key = testKey("client_ed25519");
  const dpkg = "git\tinstall ok installed\t1:2.39.2-1.1\n";
  const policy =
    "jq:\n  Installed: (none)\n  Candidate: 1.6-2.1\n  Version table:\n     1.6-2.1 500\n        500 http://deb.debian.org/debian bookworm/main amd64 Packages\n";

  test("a drifted installer, one the state cannot reach, a fixture installer checked with no check-mode code of its own; nothing that changes anything reaches the VM", async () => {
    const server = await startServer({
      authorizedKey: key.public,
      onExec: (line) => {
        const script = unwrapLine(line).script.replace(/^(export [A-Z_]+=\S*; )+/, "");
        const os = 'ID=debian\nVERSION_CODENAME=bookworm\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n';
        if (script.startsWith(BOOT_LOOK.script)) return { stdout: answerLook(script, { os_release: os }) };
        // dpkg clean, nobody on apt's locks: every other look as a quiet VM answers it.
        if (script === DPKG_HEALTH_LOOK.script || probeNames(script)) return { stdout: answerLook(script) };
        if (/^dpkg-query/.test(line) || /dpkg-query -W/.test(line)) return { stdout: dpkg, code: 1 };
        if (/apt-cache policy/.test(line)) return { stdout: policy };
        return { stdout: "" }; // the fixture installer's file is not there: it drifts
      },
    });
    const dir = tempDir("check-run");
    const keyFile = path.join(dir, "key");
    fs.writeFileSync(keyFile, key.private, { mode: 0o600 });
    const hello: CatalogEntry = { ...helloDefinition, handlersDir: path.join(__dirname, "fixtures", "installers") };
    // hello first: it takes no cache_valid_sec, which an installer after another on a VM is sent.
    const catalog = [hello, INSTALLERS[0]];
    try {
      const cfg = config(
        [
          {
            name: "vm1",
            kind: "existing",
            address: "127.0.0.1",
            sshPort: server.port,
            user: "ubuntu",
            installers: { hello: { enabled: true } },
          },
          { name: "vm2", kind: "existing", address: "127.0.0.2" },
        ],
        { packages: { packages: ["git", "jq"] } },
        catalog,
      );
      const outputs = { vm1_address: "127.0.0.1", vm1_host_key_sha256: server.hostKeySha256 };
      const targets = checkTargets(cfg, outputs, () => keyFile, catalog);
      const said: string[] = [];
      const rows = await runChecks(targets, {
        logDir: path.join(dir, "logs"),
        projectDir: dir,
        say: (l) => said.push(l),
      });
      expect(rows.map((r) => [r.vm, r.installer, r.state])).toEqual([
        ["vm1", "install-hello", "drift"],
        ["vm1", "install-packages", "drift"],
        ["vm2", "install-hello", "skipped"],
        ["vm2", "install-packages", "error"],
      ]);
      expect(rows[0].wouldChange).toEqual(["wrote /tmp/hello"]);
      expect(rows[1]).toMatchObject({
        wouldChange: ["installed jq"],
        summary: "check: 1 change would be made: installed jq",
      });
      expect(rows[3].summary).toBe("vm2 is not in the deployed state: deploy it first (npm run deploy)");
      expect(server.commands.filter((c) => /apt-get|sudo|> \/tmp\/hello/.test(c))).toEqual([]);
      // Each job's whole progress is kept, and the caller hears a line per job.
      expect(fs.readFileSync(path.join(dir, rows[1].log!), "utf8")).toMatch(/check mode: looking only/);
      expect(said).toContain("vm1 install-packages: checking");
      expect(said.some((l) => /^vm1 install-packages: drift, 1 would change \(\d+\.\ds\)$/.test(l))).toBe(true);
      expect(exitCode(rows)).toBe(1);

      // A secret the deploy took from TF_VAR_ must be there for the check too: said before any connection.
      const pgCatalog = [INSTALLERS[2]];
      const pgConfig = config(
        [{ name: "vm1", kind: "existing", address: "127.0.0.1", sshPort: server.port }],
        { postgres: { enabled: true, passwordVariable: "pg_password" } },
        pgCatalog,
      );
      const before = server.commands.length;
      const [pg] = await runChecks(
        checkTargets(pgConfig, outputs, () => keyFile, pgCatalog),
        {
          logDir: path.join(dir, "logs"),
          projectDir: dir,
          say: () => undefined,
          environment: {},
        },
      );
      expect(pg).toMatchObject({
        state: "error",
        summary:
          "TF_VAR_pg_password is not set: export it with the value the deploy used (install-postgres's db_password)",
      });
      expect(server.commands.length).toBe(before);
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("the drift table and the exit code", () => {
  const row = (installer: string, state: DriftRow["state"], extra: Partial<DriftRow> = {}): DriftRow => ({
    vm: "demo",
    installer,
    state,
    wouldChange: [],
    summary: "",
    warnings: [],
    durationMs: 1234,
    ...extra,
  });

  test("0 in sync, 2 drift, 1 any error (as terraform plan -detailed-exitcode)", () => {
    expect(exitCode([row("a", "in sync"), row("b", "skipped")])).toBe(0);
    expect(exitCode([row("a", "in sync"), row("b", "drift")])).toBe(2);
    expect(exitCode([row("a", "error"), row("b", "drift")])).toBe(1);
  });

  test("plain when piped: a row per installer, what would change, warnings and errors spelt out, a closing line", () => {
    const text = renderDriftTable(
      [
        row("install-packages", "drift", { wouldChange: ["installed jq"], warnings: ["jq may fail to install: ..."] }),
        row("install-docker", "in sync"),
        row("install-postgres", "drift", {
          wouldChange: ["database myapp created (owner app_user)", "password of app_user updated"],
        }),
      ],
      false,
    );
    expect(text.split("\n")).toEqual([
      "VM    INSTALLER         CHECK    DURATION  WHAT A DEPLOY WOULD CHANGE",
      "demo  install-packages  drift    1.2s      installed jq",
      "demo  install-docker    in sync  1.2s      -",
      "demo  install-postgres  drift    1.2s      database myapp created (owner app_user); password of app_user updated",
      "",
      "warnings:",
      "  demo install-packages: jq may fail to install: ...",
      "",
      "drift: 2 of 3 installers would change something; to put it back: npm run rerun -- demo install-packages (it " +
        "reruns the installers after it on that VM too); after an edit to cdktf.json not yet deployed: npm run deploy",
    ]);
    expect(text).not.toContain("\x1b[");
    const errors = renderDriftTable(
      [row("install-docker", "error", { summary: "boom", log: ".vm-install/s/logs/x.log" })],
      true,
    );
    expect(errors).toContain("\x1b[31merror");
    expect(errors).toContain("  demo install-docker: boom (log: .vm-install/s/logs/x.log)");
    expect(errors.split("\n").at(-1)).toBe("1 of 1 checks failed; 0 found drift");
  });
});

// The job's message is the VM's word: would_change, the summary, warnings and an error's text each reach a
// row (and what --json prints) as one printable line, and the table, its warnings and its errors get a line each.
describe("what the VM says is data in the drift table, not layout", () => {
  const job = { vm: "web-1", installer: "install-packages" };
  const fromMessages = [
    rowFromMessage(job, "Succeeded", hostileResult({ would_change: [HOSTILE, "installed jq"] }), { log: "x.log" }),
    rowFromMessage(job, "Succeeded", hostileResult({ would_change: [] }), {}),
    rowFromMessage(job, "Failed", `install-packages failed while installing: ${HOSTILE}`, { log: "x.log" }),
    rowFromMessage(job, "Succeeded", `not JSON: ${HOSTILE}`, {}),
  ];
  const forged: DriftRow[] = [
    { ...job, state: "drift", wouldChange: [HOSTILE, HOSTILE], summary: HOSTILE, warnings: [HOSTILE], log: HOSTILE },
    { ...job, state: "error", wouldChange: [], summary: HOSTILE, warnings: [HOSTILE, HOSTILE], log: HOSTILE },
    { ...job, state: "in sync", wouldChange: [], summary: HOSTILE, warnings: [] },
  ];

  test("every text of every row built from a job message is one printable line", () => {
    expect(fromMessages.map((r) => r.state)).toEqual(["drift", "in sync", "error", "error"]);
    expect(fromMessages[0].wouldChange).toHaveLength(2);
    expect(fromMessages[0].warnings).toHaveLength(2);
    for (const text of stringsIn(fromMessages)) expect(text).not.toMatch(NOT_ONE_PRINTABLE_LINE);
  });

  test("the table has a line per row, a line per warning and per error, and no escape but its own colours", () => {
    for (const rows of [fromMessages, forged]) {
      const lines = renderDriftTable(rows, false).split("\n");
      const warnings = rows.flatMap((r) => r.warnings).length;
      const errors = rows.filter((r) => r.state === "error").length;
      expect(lines).toHaveLength(1 + rows.length + (warnings ? 2 + warnings : 0) + (errors ? 2 + errors : 0) + 2);
      expect(lines.slice(1, 1 + rows.length).every((l) => l.startsWith("web-1  install-packages  "))).toBe(true);
      for (const line of lines) expect(line).not.toMatch(NOT_ONE_PRINTABLE_LINE);
      const coloured = renderDriftTable(rows, true).replace(OWN_COLOURS, "");
      expect(coloured).toBe(renderDriftTable(rows, false));
    }
  });
});

describe("the project folder status, check and trust work on", () => {
  test("where npm was started (INIT_CWD) when npm started this script and that folder holds a cdktf.json, else the current folder", () => {
    const project = tempDir("project-folder");
    fs.writeFileSync(path.join(project, "cdktf.json"), "{}");
    const elsewhere = tempDir("no-project");
    expect(projectFolder("check", { INIT_CWD: project, npm_lifecycle_event: "check" }, "/repo")).toBe(project);
    expect(projectFolder("check", { INIT_CWD: elsewhere, npm_lifecycle_event: "check" }, "/repo")).toBe("/repo");
    expect(projectFolder("check", {}, "/repo")).toBe("/repo");
    // Inherited from an outer npm script (npm test running a test that runs the command): not ours.
    expect(projectFolder("check", { INIT_CWD: project, npm_lifecycle_event: "test" }, "/repo")).toBe("/repo");
  });
});
