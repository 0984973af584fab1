// End-to-end: `cdktf destroy` with vms[].onDestroy "uninstall" takes back what the deploy installed (an
// existing host, the local target), on a sandbox of its own; absent.test.ts has each installer's absent.
import { existingHost, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { expectAuditClean, expectNowhere, expectPackagesBack, expectRan, T, vmState } from "./support/absent-e2e";
import { describeE2E, sandboxPerSuite } from "./support/e2e";

describeE2E("cdktf destroy with onDestroy uninstall on a sandbox VM: the VM as before the deploy", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T);

  test(
    'cdktf destroy with onDestroy "uninstall" (existing host, local target) takes back what the deploy installed',
    async () => {
      const dir = tempDir("absent-destroy");
      const pristine = await vmState(sb);
      const project = (runId: number) =>
        writeCdktfProject(dir, {
          stackName: "e2e-absent",
          runId,
          jobTarget: "local",
          installers: { packages: { packages: ["jq", "curl"] } },
          vms: [{ ...existingHost("one", sb), onDestroy: "uninstall" }],
        });
      for (const runId of [1, 2]) {
        // The second deploy reruns the job (a new run_id replaces it): that must not uninstall first.
        project(runId);
        const deploy = await runCdktf(dir, ["deploy", "--auto-approve"]);
        const failed = deploy.code ? deploy.output.slice(-3000) : "";
        expect({ code: deploy.code, failed }).toEqual({ code: 0, failed: "" });
        expect(deploy.output).not.toMatch(/_uninstall.*Destroying/);
        expect(deploy.output).toMatch(/one_packages(?: \([^)]*\))?: Creating/);
        expect((await vmState(sb)).packages).toMatch(/^jq ii $/m);
      }
      const destroy = await runCdktf(dir, ["destroy", "--auto-approve"]);
      expect({ code: destroy.code, tail: destroy.code ? destroy.output.slice(-3000) : "" }).toEqual({
        code: 0,
        tail: "",
      });
      expect(destroy.output).toMatch(/one_packages_uninstall.*\(local-exec\):.*removed jq libjq1 libonig5/);
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
    },
    T,
  );

  test(
    'cdktf destroy with onDestroy "uninstall" takes install-postgres back with the password from the destroying ' +
      "shell: none in cdktf.out, state or logs; without it the destroy stops before the VM is touched",
    async () => {
      const PW = "destroy-test-password-1";
      const dir = tempDir("absent-destroy-pg");
      const env = { TF_VAR_pg_password: PW };
      // The suite's own environment must not set it: the refused destroy below runs without it.
      expect(process.env.TF_VAR_pg_password).toBeUndefined();
      const project = (purgeData: boolean) =>
        writeCdktfProject(dir, {
          stackName: "e2e-absent-pg",
          jobTarget: "local",
          installers: {
            packages: { enabled: false },
            postgres: { enabled: true, passwordVariable: "pg_password", purgeData },
          },
          vms: [{ ...existingHost("one", sb), onDestroy: "uninstall" }],
        });
      const pristine = await vmState(sb);
      project(false);
      expectRan(await runCdktf(dir, ["deploy", "--auto-approve"], { env }));
      const installed = await vmState(sb);
      const major = /^postgresql-(\d+) ii $/m.exec(installed.packages)?.[1];
      expect(major).toBeDefined();
      const dataDir = `/var/lib/postgresql/${major}/main`;

      // Unset, bin/cdktf stops the destroy before cdktf runs (piped, cdktf waits for ever at Terraform's
      // prompt); set but empty, it stops it too (the stack's variable check would refuse it in Terraform). Either
      // way the message names the variable and what it holds, and the VM is as installed.
      const unset = await runCdktf(dir, ["destroy", "--auto-approve"]);
      expect(unset.code).toBe(1);
      expect(unset.output).toMatch(/cdktf destroy needs TF_VAR_pg_password set \(install-postgres's db_password/);
      expect(unset.output).not.toMatch(/_uninstall.*\(local-exec\)/);
      expect(await vmState(sb)).toEqual(installed);
      const empty = await runCdktf(dir, ["destroy", "--auto-approve"], { env: { TF_VAR_pg_password: "" } });
      expect(empty.code).not.toBe(0);
      // Refused by name before Terraform runs: Terraform's own check of the variable says so too, but cdktf may
      // drop Terraform's last words as it exits (seen once in CI).
      expect(empty.output).toMatch(/cdktf destroy needs TF_VAR_pg_password set, not empty \(install-postgres's db_pa/);
      expect(empty.output).not.toMatch(/_uninstall.*\(local-exec\)/);
      expect(await vmState(sb)).toEqual(installed);

      const destroy = await runCdktf(dir, ["destroy", "--auto-approve"], { env });
      expectRan(destroy);
      expect(destroy.output).toMatch(
        new RegExp(`one_postgres_uninstall.*\\(local-exec\\):.*removed .*postgresql-${major}\\b`),
      );
      const kept = await vmState(sb);
      expect(kept.postgres).toContain(`${dataDir}/PG_VERSION`);
      expectPackagesBack(pristine.packages, installed.packages, kept.packages);
      expect(kept.packages).toMatch(new RegExp(`^postgresql-${major} rc $`, "m"));
      await expectAuditClean(sb);
      expectNowhere(dir, PW);

      // purgeData: a second deploy finds the kept cluster; its destroy purges it all: the VM as before.
      project(true);
      expectRan(await runCdktf(dir, ["deploy", "--auto-approve"], { env }));
      expectRan(await runCdktf(dir, ["destroy", "--auto-approve"], { env }));
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
      expectNowhere(dir, PW);
    },
    T,
  );
});
