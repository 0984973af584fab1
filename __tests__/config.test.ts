import { parseConfig } from "../lib/construct/config/parse";
import { configProblems, context } from "./support/synth";

describe("configuration defaults", () => {
  test("a minimal context gets every documented default", () => {
    const cfg = parseConfig(context());
    expect(cfg.stackName).toBe("vm-install");
    expect(cfg.jobTarget).toBe("sless");
    expect(cfg.vms[0].kind).toBe("nubes");
    expect(cfg.runId).toBe(1);
    expect(cfg.nubes).toMatchObject({
      providerSource: "terra.k8c.ru/nubes/nubes",
      providerVersion: "2.0.0",
      deleteMode: "delete",
      resumeIfExists: true,
      vappName: "vm-install",
    });
    expect(cfg.sless).toEqual({
      endpoint: "https://sless.kube5s.ru",
      providerSource: "sless.kube5s.ru/sless/sless",
      providerVersion: "",
      runtime: "nodejs20",
    });
    const vm = cfg.vms[0];
    expect(vm).toMatchObject({
      name: "vm1",
      vappName: "vm-install-vm1",
      cpu: 2,
      ram: 2,
      disk: 20,
      image: "Ubuntu_22-20G",
      user: "ubuntu",
      accessPorts: ["22"],
      sshPort: 22,
      addressKey: "externalConnect",
      zabbix: false,
    });
    expect(vm.installers.packages).toEqual({
      enabled: true,
      waitTimeoutSec: 600,
      packages: ["git", "curl", "htop", "jq", "unzip"],
      update: true,
      state: "present",
    });
    expect(vm.installers.docker).toMatchObject({
      enabled: false,
      waitTimeoutSec: 900,
      channel: "official",
      compose: true,
      verify: "hello-world",
    });
    expect(vm.installers.postgres).toMatchObject({
      enabled: false,
      waitTimeoutSec: 900,
      dbName: "myapp",
      dbUser: "app_user",
      listenAddresses: "localhost",
      allowRemote: false,
      allowedCidrs: ["0.0.0.0/0"],
    });
  });

  test("a VM's installers override the top level key by key", () => {
    const cfg = parseConfig(
      context({
        installers: { packages: { packages: ["git"], update: false }, docker: { enabled: true } },
        vms: [{ name: "a" }, { name: "b", installers: { packages: { packages: ["jq"] }, docker: { enabled: false } } }],
      }),
    );
    expect(cfg.vms[0].installers.packages).toMatchObject({ packages: ["git"], update: false });
    expect(cfg.vms[0].installers.docker.enabled).toBe(true);
    expect(cfg.vms[1].installers.packages).toMatchObject({ packages: ["jq"], update: false });
    expect(cfg.vms[1].installers.docker.enabled).toBe(false);
  });

  const fingerprints =
    "repository key fingerprints: Docker's and PGDG's by default; " +
    "gpg's spaced, lower-case form normalised; one or a list";
  test(fingerprints, () => {
    const dflt = parseConfig(context()).vms[0].installers;
    expect(dflt.docker.repoKeyFingerprint).toEqual(["9DC858229FC7DD38854AE2D88D81803C0EBFCD88"]);
    expect(dflt.postgres.repoKeyFingerprint).toEqual(["B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8"]);
    const cfg = parseConfig(
      context({
        installers: {
          docker: { repoKeyFingerprint: "9dc8 5822 9fc7 dd38 854a  e2d8 8d81 803c 0ebf cd88" },
          postgres: {
            repoKeyFingerprint: [
              "B97B 0AFC AA1A 47F0 44F2  44A0 7FCC 7D46 ACCC 4CF8",
              "65BCE0E8CBCA4D562DB7E9CCEB56BEEFDC00166A",
            ],
          },
        },
      }),
    ).vms[0].installers;
    expect(cfg.docker.repoKeyFingerprint).toEqual(["9DC858229FC7DD38854AE2D88D81803C0EBFCD88"]);
    expect(cfg.postgres.repoKeyFingerprint).toEqual([
      "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8",
      "65BCE0E8CBCA4D562DB7E9CCEB56BEEFDC00166A",
    ]);
    expect(configProblems(context({ installers: { docker: { repoKeyFingerprint: "0EBFCD88" } } }))).toEqual([
      'installers.docker.repoKeyFingerprint: "0EBFCD88" is not an OpenPGP key fingerprint ' +
        "(40 hex digits; a short key ID is not enough)",
    ]);
  });
});

describe("each class of bad configuration fails with a message naming the key path and what is allowed", () => {
  test("no vmInstall context at all", () => {
    expect(configProblems(undefined)).toEqual([
      expect.stringMatching(/vmInstall: missing; add a "vmInstall" object under "context" in cdktf.json/),
    ]);
  });

  test("an unknown key, at the top and nested", () => {
    const p = configProblems(context({ colour: "blue", vms: [{ name: "vm1", cpus: 4 }] }));
    const topKeys = "stackName, runId, parallelism, jobTarget, backend, nubes, sless, installers, vms, rollout";
    expect(p).toContainEqual(`colour: unknown key; allowed here: ${topKeys}`);
    expect(p).toContainEqual(
      expect.stringMatching(
        /^vms\[0\]\.cpus: unknown key; did you mean "cpu"\? allowed here: name, kind, vappName, cpu, ram/,
      ),
    );
  });

  test("a wrong type", () => {
    const p = configProblems(
      context({ runId: "2", vms: [{ name: "vm1", cpu: "two", zabbix: "yes", accessPorts: "22" }] }),
    );
    expect(p).toContainEqual('runId: expected a whole number from 1 to 1000000000, got "2"');
    expect(p).toContainEqual('vms[0].cpu: expected a whole number from 1 to 64, got "two"');
    expect(p).toContainEqual('vms[0].zabbix: expected true or false, got "yes"');
    expect(p).toContainEqual('vms[0].accessPorts: expected a list, got "22"');
  });

  test("a value outside its choices or range", () => {
    const p = configProblems(
      context({
        nubes: { vdcUid: "v", nsxtUid: "n", deleteMode: "destroy" },
        vms: [{ name: "vm1", ram: 0, addressKey: "publicIp" }],
      }),
    );
    expect(p).toContainEqual('nubes.deleteMode: expected one of "delete", "suspend", "state_only", got "destroy"');
    expect(p).toContainEqual("vms[0].ram: expected a whole number from 1 to 512, got number 0");
    expect(p).toContainEqual('vms[0].addressKey: expected one of "externalConnect", "internalConnect", got "publicIp"');
  });

  test("an aptProxy with credentials, a path or another scheme is refused at synth, by the handlers' rule", () => {
    const p = configProblems(
      context({
        vms: [
          { name: "vm1", aptProxy: "http://user:pw@proxy:3128" },
          { name: "vm2", aptProxy: "http://proxy:3128/x" },
          { name: "vm3", aptProxy: "socks5://proxy:1080" },
          { name: "vm4", aptProxy: "http://proxy.example:3128" },
        ],
      }),
    );
    expect(p).toContainEqual(expect.stringMatching(/^vms\[0\]\.aptProxy: .* holds credentials/));
    expect(p).toContainEqual(expect.stringMatching(/^vms\[1\]\.aptProxy: .* is not http:\/\/host:port/));
    expect(p).toContainEqual(expect.stringMatching(/^vms\[2\]\.aptProxy: .* is not http:\/\/host:port/));
    expect(p.filter((x) => x.startsWith("vms[3]"))).toEqual([]);
  });

  test("SSH retry settings out of range, and reserved PostgreSQL names the handler would refuse", () => {
    const p = configProblems(
      context({
        installers: { postgres: { dbName: "template1", dbUser: "public" } },
        vms: [{ name: "vm1", sshRetry: { attempts: 0, budget_sec: 5 } }],
      }),
    );
    expect(p).toContainEqual("vms[0].sshRetry.attempts: expected a whole number from 1 to 20, got number 0");
    expect(p).toContainEqual(
      expect.stringMatching(
        /^vms\[0\]\.sshRetry\.budget_sec: unknown key; did you mean "budgetSec"\? allowed here: attempts, delaySec, budgetSec, timeoutSec$/,
      ),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.postgres\.dbName: "template1" is a reserved word for a database/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.postgres\.dbUser: "public" is a reserved word for a role/),
    );
  });

  test("a missing required key", () => {
    const p = configProblems({ nubes: { vdcUid: "v" } });
    expect(p).toContainEqual("nubes.nsxtUid: required key is missing");
    expect(p).toContainEqual("vms: required key is missing");
    expect(configProblems({ vms: [{ name: "vm1" }] })).toEqual([
      expect.stringMatching(/^nubes: required when a VM is of kind "nubes" \(the default\)/),
    ]);
  });

  test("an existing host: address required, Nubes-only keys refused, no nubes section needed", () => {
    const p = configProblems({ vms: [{ name: "h1", kind: "existing", cpu: 4, image: "x" }] });
    expect(p).toEqual([
      'vms[0].address: required for kind "existing": the host\'s IP address or name',
      'vms[0].cpu: only for kind "nubes" (a VM this stack creates); remove it from an existing host',
      'vms[0].image: only for kind "nubes" (a VM this stack creates); remove it from an existing host',
    ]);
    const cfg = parseConfig({
      jobTarget: "local",
      vms: [
        {
          name: "h1",
          kind: "existing",
          address: "10.0.0.5",
          sshPort: 2222,
          user: "deploy",
          privateKeyPath: "/keys/h1",
          hostKeySha256: `SHA256:${"D".repeat(43)}`,
        },
      ],
    });
    expect(cfg.nubes).toBeUndefined();
    expect(cfg.jobTarget).toBe("local");
    expect(cfg.vms[0]).toMatchObject({
      kind: "existing",
      address: "10.0.0.5",
      sshPort: 2222,
      user: "deploy",
      privateKeyPath: "/keys/h1",
    });
    expect(configProblems({ jobTarget: "lambda", vms: [{ name: "h1", kind: "server", address: "h" }] })).toEqual([
      'jobTarget: expected one of "sless", "local", got "lambda"',
      'vms[0].kind: expected one of "nubes", "existing", got "server"',
    ]);
  });

  test("an invalid package name", () => {
    const p = configProblems(
      context({
        installers: { packages: { packages: ["git", "git;touch /tmp/pwned", "Curl", "x", "jq=not a version"] } },
      }),
    );
    expect(p).toEqual([
      expect.stringMatching(
        /^installers\.packages\.packages\[1\]: "git;touch \/tmp\/pwned" is not a Debian package name/,
      ),
      expect.stringMatching(/^installers\.packages\.packages\[2\]: "Curl" is not a Debian package name/),
      expect.stringMatching(/^installers\.packages\.packages\[3\]: "x" is not a Debian package name/),
      expect.stringMatching(/^installers\.packages\.packages\[4\]: "jq=not a version" is not a Debian package name/),
    ]);
    expect(configProblems(context({ installers: { packages: { packages: [] } } }))).toEqual([
      "installers.packages.packages: expected at least 1 item, got 0",
    ]);
    expect(
      configProblems(context({ installers: { packages: { packages: ["git", "jq", "git=1:2.39.5-0+deb12u3"] } } })),
    ).toEqual([
      'installers.packages.packages[2]: package "git" is already listed at installers.packages.packages[0]; ' +
        "list each package once",
    ]);
  });

  test("an invalid identifier (database, role, user, VM name) or network value", () => {
    const p = configProblems(
      context({
        installers: {
          postgres: {
            dbName: "my-app",
            dbUser: "x'; DROP ROLE postgres; --",
            allowedCidrs: ["10.0.0.0/33"],
            listenAddresses: "localhost; rm",
          },
          docker: { users: ["Root User"], repoUrl: "https://x.example/$(id)" },
        },
        vms: [{ name: "VM_1", address: "1.2.3.4 && id", hostKeySha256: "md5:ab" }],
      }),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.postgres\.dbName: "my-app" is not allowed; expected a PostgreSQL name/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.postgres\.dbUser: .* is not allowed; expected a PostgreSQL name/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(
        /^installers\.postgres\.allowedCidrs\[0\]: "10\.0\.0\.0\/33" is not a network in CIDR form/,
      ),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.postgres\.listenAddresses: .* is not "\*" or a comma-separated list/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.docker\.users\[0\]: "Root User" is not allowed; expected a Unix user name/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^installers\.docker\.repoUrl: .* is not allowed; expected an http\(s\) URL/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^vms\[0\]\.name: "VM_1" is not allowed; expected a lowercase letter/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^vms\[0\]\.address: "1\.2\.3\.4 && id" is not an IP address or host name/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^vms\[0\]\.hostKeySha256: "md5:ab" is not allowed; expected an OpenSSH fingerprint/),
    );
    expect(configProblems(context({ installers: { postgres: { dbUser: "postgres" } } }))).toEqual([
      expect.stringMatching(/dbUser: "postgres" is reserved by PostgreSQL/),
    ]);
  });

  test("postgres enabled with no password variable", () => {
    const p = configProblems(context({ vms: [{ name: "vm1", installers: { postgres: { enabled: true } } }] }));
    expect(p).toEqual([
      expect.stringMatching(
        new RegExp(
          "^vms\\[0\\]\\.installers\\.postgres\\.passwordVariable: required when postgres is enabled; " +
            "name a Terraform variable .* TF_VAR_pg_password",
        ),
      ),
    ]);
  });

  test("remote access asked for while listening on localhost only", () => {
    const p = configProblems(
      context({ installers: { postgres: { enabled: true, passwordVariable: "pg_password", allowRemote: true } } }),
    );
    expect(p).toEqual([
      expect.stringMatching(
        /^vms\[0\]\.installers\.postgres\.listenAddresses: "localhost" with allowRemote true admits no remote client/,
      ),
    ]);
  });

  test("a key path Terraform would read as a template", () => {
    const p = configProblems(
      context({ vms: [{ name: "vm1", privateKeyPath: "keys/${var.x}", publicKeyPath: "keys/%{if true}k" }] }),
    );
    expect(p).toEqual([
      'vms[0].privateKeyPath: contains "${", which Terraform reads as template syntax in the synthesized ' +
        "configuration; remove it (no setting needs it)",
      'vms[0].publicKeyPath: contains "%{", which Terraform reads as template syntax in the synthesized ' +
        "configuration; remove it (no setting needs it)",
    ]);
  });

  test("no string anywhere may carry template syntax, whatever its own rule allows", () => {
    const p = configProblems(
      context({
        nubes: { vdcUid: "vdc-%{ for x in [1] }x%{ endfor }", nsxtUid: "nsxt" },
        vms: [{ name: "vm1", image: 'Ubuntu_22-${file("/etc/shadow")}', vappName: "app${var.pg_password}" }],
        installers: { packages: { packages: ["jq", "x${1}"] } },
      }),
    );
    for (const path of ["nubes.vdcUid", "vms[0].vappName", "vms[0].image", "installers.packages.packages[1]"]) {
      expect(p).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^${path.replace(/[[\].]/g, "\\$&")}: contains "[$%]\\{", which Terraform reads as template syntax`,
          ),
        ),
      );
    }
  });

  test("a backend: each type takes its own keys, requires what it needs, and never a credential", () => {
    expect(parseConfig(context({})).backend).toEqual({ type: "local" });
    expect(parseConfig(context({ backend: { type: "pg", schemaName: "vm_install" } })).backend).toEqual({
      type: "pg",
      schemaName: "vm_install",
    });
    expect(configProblems(context({ backend: { type: "s3", bucket: "tf-state" } }))).toEqual([
      'backend.key: required for backend "s3"',
      'backend.region: required for backend "s3"',
    ]);
    expect(configProblems(context({ backend: { type: "pg", connStr: "postgres://u:secret@db/tf" } }))).toEqual([
      "backend.connStr: unknown key; allowed here: type, schemaName, bucket, key, region, endpoint, usePathStyle",
    ]);
    expect(configProblems(context({ backend: { type: "local", bucket: "tf-state" } }))).toEqual([
      'backend.bucket: not a setting of backend "local"',
    ]);
    expect(configProblems(context({ backend: { type: "consul" } }))).toEqual([
      expect.stringMatching(/^backend\.type: .*"local", "pg" or "s3"|^backend\.type: /),
    ]);
  });

  test("two VMs with one name", () => {
    expect(configProblems(context({ vms: [{ name: "a" }, { name: "a" }] }))).toEqual([
      'vms[1].name: "a" is already used by vms[0]; VM names must be unique',
    ]);
  });

  test("every problem is reported at once, and the error says where", () => {
    try {
      parseConfig(context({ runId: 0, vms: [{ name: "vm1", cpu: 0 }] }));
      throw new Error("not rejected");
    } catch (err) {
      expect((err as Error).message).toMatch(
        /^cdktf\.json context\.vmInstall: 2 problems:\n {2}- runId: .*\n {2}- vms\[0\]\.cpu: /,
      );
    }
  });
});
