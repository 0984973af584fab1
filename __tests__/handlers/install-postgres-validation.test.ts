// install-postgres refuses a bad event before it connects: a name a shell, SQL or pg_hba.conf would read as
// syntax or as a reserved word, a short or multi-line password, a bad CIDR, version, URL or fingerprint. Nothing
// runs on the VM, every problem is listed at once, and a password is never quoted back.
import { PW } from "./support/postgres-password";
import { BASE, run } from "./support/postgres-steps";

describe("install-postgres: event validation (before any SSH)", () => {
  const invalid: [string, unknown, RegExp][] = [
    [
      "shell syntax in db_name",
      { ...BASE, db_name: "myapp; rm -rf /" },
      /event db_name: "myapp; rm -rf \/" is not allowed/,
    ],
    [
      "command substitution in db_user",
      { ...BASE, db_user: "$(reboot)" },
      /event db_user: "\$\(reboot\)" is not allowed/,
    ],
    [
      "SQL syntax in db_name",
      { ...BASE, db_name: `x"; DROP ROLE postgres; --` },
      /event db_name: .* is not allowed; expected a PostgreSQL name/,
    ],
    ["SQL quote in db_user", { ...BASE, db_user: "o'brien" }, /event db_user: "o'brien" is not allowed/],
    ["uppercase name", { ...BASE, db_name: "MyApp" }, /event db_name: "MyApp" is not allowed/],
    ["a name longer than 63", { ...BASE, db_user: "a".repeat(64) }, /event db_user: .* is not allowed/],
    ["the postgres role", { ...BASE, db_user: "postgres" }, /event db_user: "postgres" is reserved by PostgreSQL/],
    ["a pg_ role", { ...BASE, db_user: "pg_monitor" }, /event db_user: "pg_monitor" is reserved/],
    [
      "pg_hba keyword as database",
      { ...BASE, db_name: "all" },
      /event db_name: "all" is a reserved word for a database/,
    ],
    ["public as role", { ...BASE, db_user: "public" }, /event db_user: "public" is a reserved word for a role/],
    ["template1 as database", { ...BASE, db_name: "template1" }, /event db_name: "template1" is a reserved word/],
    ["missing password", { db_name: "myapp", db_user: "app_user" }, /event db_password: required key is missing/],
    ["empty password", { ...BASE, db_password: "" }, /event db_password: is empty/],
    [
      "password not a string",
      { ...BASE, db_password: 12345678 },
      /event db_password: expected a string \(the role's password\), got number/,
    ],
    ["missing db_name", { db_user: "app_user", db_password: PW }, /event db_name: required key is missing/],
    [
      "bad CIDR (bits)",
      { ...BASE, allow_remote: true, allowed_cidrs: ["10.0.0.0/33"] },
      /event allowed_cidrs\[0\]: "10.0.0.0\/33" is not a network in CIDR form/,
    ],
    [
      "bad CIDR (no bits)",
      { ...BASE, allowed_cidrs: ["10.0.0.1"] },
      /event allowed_cidrs\[0\]: "10.0.0.1" is not a network in CIDR form/,
    ],
    ["shell in a CIDR", { ...BASE, allowed_cidrs: ["0.0.0.0/0; id"] }, /event allowed_cidrs\[0\]/],
    ["empty CIDR list", { ...BASE, allowed_cidrs: [] }, /event allowed_cidrs: expected at least 1 item/],
    [
      "the same CIDR twice",
      { ...BASE, allowed_cidrs: ["10.0.0.0/8", "10.0.0.0/8"] },
      /event allowed_cidrs\[1\]: "10.0.0.0\/8" appears twice/,
    ],
    [
      "bad listen_addresses",
      { ...BASE, listen_addresses: "*'; x" },
      /event listen_addresses: .* is not "\*" or a comma-separated list/,
    ],
    [
      "pg_version with a minor",
      { ...BASE, pg_version: "15.4" },
      /event pg_version: "15.4" is not allowed; expected a PostgreSQL major/,
    ],
    ["pg_version as a number", { ...BASE, pg_version: 15 }, /event pg_version: expected a string/],
    [
      "repo_url with a quote",
      { ...BASE, repo_url: "https://mirror.example/pg'x" },
      /event repo_url: .* is not allowed; expected an http\(s\) URL/,
    ],
    [
      "repo_key_fingerprint malformed",
      { ...BASE, repo_key_fingerprint: "ACCC4CF8" },
      /event repo_key_fingerprint: "ACCC4CF8" is not an OpenPGP key fingerprint/,
    ],
    ["allow_remote not a boolean", { ...BASE, allow_remote: "yes" }, /event allow_remote: expected true or false/],
    [
      "an unknown key",
      { ...BASE, db_pasword: "x" },
      new RegExp(
        /event db_pasword: unknown key; did you mean "db_password"\? allowed here: pg_version, db_name, /.source +
          /db_user, db_password, listen_addresses, allow_remote, remote_ssl, allowed_cidrs, repo_url, /.source +
          /repo_key_url, repo_key_fingerprint, parameters, extensions, tls, tls_names, tls_renew_days, /.source +
          /tls_valid_days, tls_ca_cert, tls_ca_key, tls_cert, tls_key, update, cache_valid_sec, state, /.source +
          /purge_data, apt, ssh/.source,
      ),
    ],
  ];

  it.each(invalid)("rejects %s with no command run", async (_what, event, message) => {
    const { error, connects, remote } = await run(event, []);
    expect(error?.message).toMatch(/^install-postgres: invalid input, nothing was done on the VM: /);
    expect(error?.message).toMatch(message);
    expect(connects).toBe(0);
    expect(remote.calls).toHaveLength(0);
  });

  it("a password with a newline is rejected without being quoted back", async () => {
    const secret = "first line\nsecond line s3cr3t";
    const { error, connects } = await run({ ...BASE, db_password: secret }, []);
    expect(error?.message).toMatch(/event db_password: contains a control character/);
    expect(error?.message).not.toContain("s3cr3t");
    expect(error?.message).not.toContain("first line");
    expect(connects).toBe(0);
  });

  it("a password shorter than 12 characters is refused before connecting, and never quoted back", async () => {
    const { error, connects } = await run({ ...BASE, db_password: "Sh0rt-pw!" }, []);
    expect(error?.message).toMatch(
      /event db_password: is too short \(9 characters\); at least 12 are required \(the value is not shown\)/,
    );
    expect(error?.message).not.toContain("Sh0rt-pw!");
    expect(connects).toBe(0);
  });

  it("lists every problem at once", async () => {
    const { error } = await run({ db_name: "bad name", db_user: "x;y", allowed_cidrs: ["nope"] }, []);
    expect(error?.message).toMatch(/db_name/);
    expect(error?.message).toMatch(/db_user/);
    expect(error?.message).toMatch(/db_password: required key is missing/);
    expect(error?.message).toMatch(/allowed_cidrs\[0\]/);
  });
});
