// PostgreSQL from PGDG when pg_version names a major the release does not ship: the repository set up from a
// key that must be PGDG's (or one repo_key_fingerprint admits), checked before anything is written, then the
// server package from it, on Ubuntu 22.04 (jammy-pgdg) and 24.04 (noble-pgdg).
import { dearmor } from "../../handlers/common/openpgp-armour";
import { PGDG_KEY_FINGERPRINT } from "../../handlers/install-postgres/definition";
import { pgdgKeyUrl } from "../../handlers/install-postgres/pgdg";
import { UBUNTU_2404 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import { sourcesFacts } from "./support/look-answers";
import { ALPHA_FPR, BETA_FPR, pgpKey } from "./support/pgp-fixtures";
import { expectNoPasswordOnCommandLines } from "./support/postgres-password";
import {
  aptInstallSteps,
  BASE,
  inspectSqlStep,
  inspectStep,
  loginStep,
  majorInstalled,
  majorState,
  osStep,
  psqlStep,
  run,
  WHO,
} from "./support/postgres-steps";
import { renameOf, writtenFiles } from "./support/remote-writes";
import type { Step } from "./support/scripted-remote";

/** The real PGDG key: the default repo_key_fingerprint accepts it. */
const ARMOURED = pgpKey("pgdg.asc");

/** PGDG set up for `codename` from apt.postgresql.org, then postgresql-<major> at `version` installed from it. */
function pgdgSteps(codename: string, major: string, version: string): Step[] {
  const line =
    "deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] https://apt.postgresql.org/pub/repos/apt " +
    `${codename}-pgdg main`;
  return [
    { match: "command -v curl || true", sudo: false, stdout: "/usr/bin/curl\n" },
    {
      match:
        "curl -fsSL --proto '=http,https' --retry 3 --connect-timeout 20 --max-time 120 -o \"$t\" " +
        "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
      sudo: false,
      stdout: `amd64\n${ARMOURED.toString("base64")}`,
    },
    {
      match: renameOf("/etc/apt/sources.list.d/pgdg.list"),
      sudo: true,
      stdout:
        "changed:wrote /etc/apt/keyrings/pgdg.gpg (new key)\nchanged:wrote /etc/apt/sources.list.d/pgdg.list " +
        "(new source)\n",
      // The binary keyring rebuilt from the checked packets, not the served armour; then the source line.
      check: (c, o) => {
        const [, source] = writtenFiles(c, o.stdin ?? "");
        expect(
          Buffer.from(o.stdin as Buffer).equals(Buffer.concat([dearmor(ARMOURED), Buffer.from(`${line}\n`)])),
        ).toBe(true);
        expect(source).toEqual({ path: "/etc/apt/sources.list.d/pgdg.list", content: `${line}\n` });
      },
    },
    {
      match: "for f in /etc/apt/sources.list ",
      sudo: true,
      facts: sourcesFacts([{ path: "/etc/apt/sources.list.d/pgdg.list", text: `${line}\n` }]),
    },
    ...aptInstallSteps(`postgresql-${major}`, version),
    majorInstalled(major, version),
  ];
}

/**
 * A first install of `major` from PGDG on a VM whose release does not ship it (`os` answers the OS probe):
 * the repository set up, the server package from it, the role and database made; what both releases share
 * asserted here, the result handed back for the rest.
 */
async function firstFromPgdg(os: Step, codename: string, major: string, server: string, version: string) {
  const state = majorState(major, server);
  const { result, error, remote } = await run({ ...BASE, pg_version: major }, [
    os,
    inspectStep(),
    ...pgdgSteps(codename, major, version),
    grantsRead(),
    inspectSqlStep(state),
    psqlStep(/CREATE ROLE/),
    grantsWrite((w) => expect(w.postgres).toEqual({ hba: {}, roles: { [`${major}/main`]: ["app_user"] } })),
    loginStep("127.0.0.1", { who: { ...WHO, server_version: state.server_version } }),
  ]);
  expect(error).toBeUndefined();
  expect(remote.done).toBe(true);
  expect(result).toMatchObject({ pg_major: major, installed_from: "pgdg", cluster: `${major}/main` });
  expect(result!.changes).toEqual([
    "PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (new key)",
    "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (new source)",
    `installed postgresql-${major}`,
    "role app_user created (LOGIN, password set)",
    "database myapp created (owner app_user)",
  ]);
  expectNoPasswordOnCommandLines(remote.calls);
  return result!;
}

describe("install-postgres: Ubuntu 22.04, another major from PGDG", () => {
  it("another major comes from PGDG: <repo_url> jammy-pgdg main, signed by the key in /etc/apt/keyrings", async () => {
    const result = await firstFromPgdg(
      osStep(),
      "jammy",
      "16",
      "16.3 (Ubuntu 16.3-1.pgdg22.04+1)",
      "16.3-1.pgdg22.04+1",
    );
    expect(result).toMatchObject({
      pg_version: "16.3",
      restarted: false,
      reloaded: false,
      listen_addresses: "localhost",
      allowed_cidrs: [],
    });
  });

  it("a mirror's key is taken from the mirror unless repo_key_url says otherwise", () => {
    expect(pgdgKeyUrl("https://apt.postgresql.org/pub/repos/apt")).toBe(
      "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
    );
    expect(pgdgKeyUrl("https://apt.postgresql.org/pub/repos/apt/")).toBe(
      "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
    );
    expect(pgdgKeyUrl("https://mirror.example.org/postgresql/repos/apt")).toBe(
      "https://mirror.example.org/postgresql/repos/apt/ACCC4CF8.asc",
    );
    expect(pgdgKeyUrl("https://mirror.example.org/pg", "https://keys.example.org/pgdg.asc")).toBe(
      "https://keys.example.org/pgdg.asc",
    );
  });

  it(
    "a mirror's key that is not PGDG's fails before anything is written, naming both fingerprints, with or " +
      "without gpg on the VM",
    async () => {
      const { error, remote } = await run({ ...BASE, pg_version: "16", repo_url: "http://mirror.example.org/pg" }, [
        osStep(),
        inspectStep(),
        { match: "command -v curl", stdout: "/usr/bin/curl\n" },
        {
          match: "http://mirror.example.org/pg/ACCC4CF8.asc",
          stdout: `amd64\n${pgpKey("alpha.gpg").toString("base64")}`,
        },
      ]);
      expect(remote.done).toBe(true);
      expect(remote.calls.filter((c) => c.opts.sudo)).toEqual([]);
      expect(error?.message).toContain(
        "the key at http://mirror.example.org/pg/ACCC4CF8.asc for apt repository pgdg is not the expected key: " +
          `expected ${PGDG_KEY_FINGERPRINT}, served ${ALPHA_FPR}`,
      );
      expect(error?.message).toContain("nothing was written to the VM");
      expect(error?.message).toMatch(/point repo_key_url at the repository's own key, or set repo_key_fingerprint/);
    },
  );

  it("repo_key_fingerprint admits a mirror's own key(s), given as a list", async () => {
    const both = Buffer.concat([pgpKey("alpha.gpg"), pgpKey("beta.gpg")]); // one keyring of two keys
    const { error, remote } = await run(
      {
        ...BASE,
        pg_version: "16",
        repo_url: "http://mirror.example.org/pg",
        repo_key_fingerprint: [BETA_FPR, ALPHA_FPR],
      },
      [
        osStep(),
        inspectStep(),
        { match: "command -v curl", stdout: "/usr/bin/curl\n" },
        { match: "http://mirror.example.org/pg/ACCC4CF8.asc", stdout: `amd64\n${both.toString("base64")}` },
        {
          match: renameOf("/etc/apt/sources.list.d/pgdg.list"),
          sudo: true,
          check: (_c, o) => expect(String(o.stdin)).toMatch(/http:\/\/mirror\.example\.org\/pg jammy-pgdg main\n$/),
          stdout: "changed:wrote /etc/apt/keyrings/pgdg.gpg (new key)\n",
        },
        { match: "for f in /etc/apt/sources.list ", sudo: true, facts: sourcesFacts([]) },
        { match: /^dpkg-query -W -f=\S+ postgresql-16$/, sudo: false, code: 1 },
        { match: /^apt-get update /, sudo: true, code: 100, stderr: "E: stop here\n" },
      ],
    );
    expect(remote.done).toBe(true);
    expect(error?.message).not.toMatch(/not the expected key/);
  });
});

describe("install-postgres: Ubuntu 24.04 (noble), another major from PGDG", () => {
  it("another major comes from PGDG: <repo_url> noble-pgdg main (PostgreSQL 17)", async () => {
    const server = "17.11 (Ubuntu 17.11-1.pgdg24.04+2)";
    const result = await firstFromPgdg(osStep(UBUNTU_2404), "noble", "17", server, "17.11-1.pgdg24.04+2");
    expect(result).toMatchObject({ pg_version: "17.11", os: { id: "ubuntu", codename: "noble" } });
  });
});
