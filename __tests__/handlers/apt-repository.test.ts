import { keyFormat } from "../../handlers/common/apt-key";
import { ensureAptRepository, sourceLine, supersededKeyrings } from "../../handlers/common/apt-repository";
import { dearmor } from "../../handlers/common/openpgp-armour";
import {
  normalizeUri,
  planStaleRemoval,
  removeStaleRepositories,
  type StaleRepositoryOptions,
} from "../../handlers/common/stale-repositories";
import { sourcesFacts } from "./support/look-answers";
import { ALPHA_FPR, DOCKER_FPR, pgpKey } from "./support/pgp-fixtures";
import { renameOf, writtenFiles } from "./support/remote-writes";
import { ScriptedRemote } from "./support/scripted-remote";

/** Docker's real release key (armoured, as download.docker.com serves it). */
const ARMORED = pgpKey("docker-release.asc").toString("latin1");
const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
const DOCKER = {
  name: "docker",
  keyUrl: "https://download.docker.com/linux/ubuntu/gpg",
  uri: "https://download.docker.com/linux/ubuntu",
  suite: "jammy",
  components: ["stable"],
  fingerprints: [DOCKER_FPR],
};

describe("apt-repository: pieces", () => {
  it("builds the one-line signed-by source Docker's docs use", () => {
    expect(
      sourceLine(
        { uri: "https://download.docker.com/linux/ubuntu/", suite: "jammy", components: ["stable"] },
        ["amd64"],
        "/etc/apt/keyrings/docker.asc",
      ),
    ).toBe(
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.asc] https://download.docker.com/linux/ubuntu jammy stable",
    );
  });

  it("tells armoured from binary keys from anything else", () => {
    expect(keyFormat(Buffer.from(ARMORED))).toBe("asc");
    expect(keyFormat(Buffer.from([0x99, 0x02, 0x0d, 0x04]))).toBe("gpg");
    expect(keyFormat(Buffer.from([0xc6, 0x33]))).toBe("gpg");
    expect(keyFormat(Buffer.from([0xca, 0x03, 0x50, 0x47, 0x50]))).toBe("gpg"); // a marker packet first
    expect(keyFormat(Buffer.from(`Our key:\n${ARMORED}`))).toBe("asc"); // served as armour; the reader refuses the text
    expect(keyFormat(Buffer.from([0x88, 0x02]))).toBeUndefined(); // a signature is no key
    expect(keyFormat(Buffer.from("<html><body>404</body></html>"))).toBeUndefined();
    expect(keyFormat(Buffer.alloc(0))).toBeUndefined();
  });

  it("compares repository URIs without scheme, case or trailing slash", () => {
    expect(normalizeUri("HTTP://Download.Docker.com/linux/ubuntu/")).toBe(
      normalizeUri("https://download.docker.com/linux/ubuntu"),
    );
    expect(normalizeUri("https://download.docker.com/linux/debian")).not.toBe(
      normalizeUri("https://download.docker.com/linux/ubuntu"),
    );
  });
});

describe("apt-repository: ensureAptRepository", () => {
  const fetch = (stdout: string, extra = {}) => ({ match: "curl -fsSL", sudo: false, stdout, ...extra });

  it("fetches the key as the login user, writes key and source as root, and reports what changed", async () => {
    const remote = new ScriptedRemote([
      fetch(`amd64\n${b64(ARMORED)}`, {
        check: (c: string) => {
          expect(c).toMatch(/^dpkg --print-architecture && /);
          expect(c).toContain("https://download.docker.com/linux/ubuntu/gpg");
        },
      }),
      {
        match: renameOf("/etc/apt/keyrings/docker.gpg"),
        sudo: true,
        stdout:
          "changed:created /etc/apt/keyrings\nchanged:wrote /etc/apt/keyrings/docker.gpg (new key)\n" +
          "created:/etc/apt/keyrings/docker.gpg\nchanged:wrote /etc/apt/sources.list.d/docker.list (new source)\n" +
          "created:/etc/apt/sources.list.d/docker.list\n",
        check: (c, opts) => {
          expect(c).toContain("mkdir -m 0755 /etc/apt/keyrings");
          // Both files written by remote-file.ts, 0644, left alone when they already are what is wanted.
          expect(c.match(/m=0644; /g)).toHaveLength(2);
          expect(c).toContain(renameOf("/etc/apt/sources.list.d/docker.list"));
          expect(c).toContain(`changed:made /etc/apt/keyrings/docker.gpg root'\\''s and 0644 (apt reads it as _apt)`);
          const [key, source] = writtenFiles(c, opts.stdin ?? "");
          expect([key.path, source.path]).toEqual([
            "/etc/apt/keyrings/docker.gpg",
            "/etc/apt/sources.list.d/docker.list",
          ]);
          expect(source.content).toBe(
            "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu " +
              "jammy stable\n",
          );
          // A VM set up by an earlier version has the served armour as docker.asc: said as a replacement, not a new key.
          expect(c).toContain(
            "elif [ -e /etc/apt/keyrings/docker.asc ]; then why='replaces /etc/apt/keyrings/docker.asc'; else " +
              'why="new key"; fi',
          );
          // Only a file written where there was none is marked as vm-install's own (state absent removes it).
          expect(c).toContain(
            `if [ -n "$w" ] && [ "$why" = "new key" ]; then echo created:/etc/apt/keyrings/docker.gpg; fi`,
          );
          expect(c).toContain(
            'new) echo "changed:wrote /etc/apt/sources.list.d/docker.list (new source)"; ' +
              "echo created:/etc/apt/sources.list.d/docker.list;;",
          );
          // Not the served armour: the binary keyring rebuilt from its packets, then the source line.
          const keyring = dearmor(ARMORED);
          expect(
            Buffer.from(opts.stdin as Buffer)
              .subarray(0, keyring.length)
              .equals(keyring),
          ).toBe(true);
          expect(Buffer.byteLength(opts.stdin ?? "")).toBe(keyring.length + Buffer.byteLength(source.content));
        },
      },
    ]);
    const out = await ensureAptRepository(remote, DOCKER);
    expect(remote.done).toBe(true);
    expect(out).toEqual({
      changed: true,
      changes: [
        "created /etc/apt/keyrings",
        "wrote /etc/apt/keyrings/docker.gpg (new key)",
        "wrote /etc/apt/sources.list.d/docker.list (new source)",
      ],
      created: ["/etc/apt/keyrings/docker.gpg", "/etc/apt/sources.list.d/docker.list"],
      keyring: "/etc/apt/keyrings/docker.gpg",
      sourceFile: "/etc/apt/sources.list.d/docker.list",
      line:
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy " +
        "stable",
      uri: "https://download.docker.com/linux/ubuntu",
      architectures: ["amd64"],
    });
  });

  it("changes nothing when key and line are already there (the compare prints nothing)", async () => {
    const remote = new ScriptedRemote([
      fetch(`arm64\n${b64(ARMORED)}`),
      { match: renameOf("/etc/apt/keyrings/docker.gpg"), sudo: true, stdout: "" },
    ]);
    const out = await ensureAptRepository(remote, DOCKER);
    expect(out.changed).toBe(false);
    expect(out.line).toBe(
      "deb [arch=arm64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy stable",
    );
  });

  it("a binary key goes to .gpg as an armoured one does (what is written is always the rebuilt binary keyring)", async () => {
    const remote = new ScriptedRemote([
      fetch(`amd64\n${b64(pgpKey("alpha.gpg"))}`),
      { match: "/etc/apt/keyrings/pgdg.gpg", sudo: true },
    ]);
    const out = await ensureAptRepository(remote, {
      name: "pgdg",
      keyUrl: "https://apt.postgresql.org/pub/repos/apt/ACCC4CF8.asc",
      uri: "https://apt.postgresql.org/pub/repos/apt",
      suite: "jammy-pgdg",
      components: ["main"],
      fingerprints: [ALPHA_FPR],
    });
    expect(out.keyring).toBe("/etc/apt/keyrings/pgdg.gpg");
    expect(out.line).toBe(
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] https://apt.postgresql.org/pub/repos/apt jammy-pgdg main",
    );
  });

  it("a key URL that fails says which URL, why, and what to check", async () => {
    const remote = new ScriptedRemote([
      fetch("amd64\n", { code: 22, stderr: "curl: (22) The requested URL returned error: 404\n" }),
    ]);
    const err = await ensureAptRepository(remote, DOCKER).catch((e) => e);
    expect(err.message).toBe(
      "could not fetch the signing key of apt repository docker from https://download.docker.com/linux/ubuntu/gpg " +
        "on the VM: curl: (22) The requested URL returned error: 404. " +
        "Check the repository URL (a mirror must serve the key at that path) and that the VM reaches it (proxy, " +
        "firewall, DNS).",
    );
    expect(remote.done).toBe(true);
  });

  it("no curl on the VM is named as such", async () => {
    const remote = new ScriptedRemote([fetch("amd64\n", { code: 127, stderr: "sh: 1: curl: not found\n" })]);
    expect((await ensureAptRepository(remote, DOCKER).catch((e) => e)).message).toMatch(
      /curl is not installed on the VM/,
    );
  });

  it("an HTML page instead of a key is refused before anything is written", async () => {
    const remote = new ScriptedRemote([fetch(`amd64\n${b64("<!DOCTYPE html><html><head><title>Blocked</title>")}`)]);
    const err = await ensureAptRepository(remote, DOCKER).catch((e) => e);
    expect(err.message).toMatch(
      /^https:\/\/download\.docker\.com\/linux\/ubuntu\/gpg did not return an OpenPGP public key but 49 bytes starting "<!DOCTYPE html>/,
    );
    expect(remote.calls).toHaveLength(1);
  });

  it("refuses unsafe specs before running anything", async () => {
    const remote = new ScriptedRemote([]);
    const err = await ensureAptRepository(remote, { ...DOCKER, uri: "https://x/$(id)", name: "../etc" }).catch(
      (e) => e,
    );
    expect(err.message).toMatch(/name "..\/etc" is not a plain file stem/);
    expect(err.message).toMatch(/uri "https:\/\/x\/\$\(id\)" is not an http\(s\) URL/);
    expect(remote.calls).toHaveLength(0);
  });
});

describe("apt-repository: stale entries", () => {
  const opts: StaleRepositoryOptions = {
    uris: ["https://download.docker.com/linux/ubuntu"],
    keep: { sources: ["/etc/apt/sources.list.d/docker.list"], keyrings: ["/etc/apt/keyrings/docker.gpg"] },
    keyrings: ["/usr/share/keyrings/docker-archive-keyring.gpg", "/etc/apt/keyrings/docker.asc"],
    trustedFingerprints: ["9DC858229FC7DD38854AE2D88D81803C0EBFCD88"],
  };
  const ours = {
    path: "/etc/apt/sources.list.d/docker.list",
    text:
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy " +
      "stable\n",
  };

  it("removes other files for the same URI, comments out lines in sources.list, keeps ours and others' entries", () => {
    const plan = planStaleRemoval(
      [
        ours,
        {
          path: "/etc/apt/sources.list",
          text:
            "deb http://archive.ubuntu.com/ubuntu jammy main\n# deb https://download.docker.com/linux/ubuntu " +
            "bionic stable\ndeb [arch=amd64] http://download.docker.com/linux/ubuntu jammy stable\n",
        },
        {
          path: "/etc/apt/sources.list.d/docker-ce.list",
          text:
            "# added by hand\ndeb [arch=amd64 signed-by=/usr/share/keyrings/docker-archive-keyring.gpg] " +
            "https://download.docker.com/linux/ubuntu/ jammy stable\n",
        },
        {
          path: "/etc/apt/sources.list.d/docker.sources",
          text:
            "Types: deb\nURIs: https://download.docker.com/linux/ubuntu\nSuites: jammy\nComponents: " +
            "stable\nSigned-By: /usr/share/keyrings/docker.gpg\n",
        },
        {
          path: "/etc/apt/sources.list.d/mixed.sources",
          text:
            "Types: deb\nURIs: https://download.docker.com/linux/ubuntu\nSuites: jammy\nComponents: " +
            "stable\n\nTypes: deb\nURIs: https://packages.example.com/apt\nSuites: stable\nComponents: " +
            "main\nSigned-By: /usr/share/keyrings/example.gpg\n",
        },
        {
          path: "/etc/apt/sources.list.d/pgdg.list",
          text: "deb [signed-by=/etc/apt/keyrings/pgdg.asc] https://apt.postgresql.org/pub/repos/apt jammy-pgdg main\n",
        },
      ],
      opts,
    );
    expect(plan.remove).toEqual(["/etc/apt/sources.list.d/docker-ce.list", "/etc/apt/sources.list.d/docker.sources"]);
    expect(plan.rewrite).toEqual([
      {
        path: "/etc/apt/sources.list",
        text:
          "deb http://archive.ubuntu.com/ubuntu jammy main\n# deb https://download.docker.com/linux/ubuntu bionic " +
          "stable\n" +
          "# disabled by vm-install (superseded by /etc/apt/sources.list.d/docker.list): deb [arch=amd64] " +
          "http://download.docker.com/linux/ubuntu jammy stable\n",
      },
      {
        path: "/etc/apt/sources.list.d/mixed.sources",
        text:
          "Types: deb\nURIs: https://packages.example.com/apt\nSuites: stable\nComponents: main\nSigned-By: " +
          "/usr/share/keyrings/example.gpg\n",
      },
    ]);
    expect(plan.keyrings.sort()).toEqual([
      "/etc/apt/keyrings/docker.asc",
      "/usr/share/keyrings/docker-archive-keyring.gpg",
      "/usr/share/keyrings/docker.gpg",
    ]);
  });

  it("never removes a keyring that an entry staying behind still uses", () => {
    const plan = planStaleRemoval(
      [
        ours,
        {
          path: "/etc/apt/sources.list.d/docker-old.list",
          text:
            "deb [signed-by=/usr/share/keyrings/shared.gpg] https://download.docker.com/linux/ubuntu jammy " +
            "stable\n",
        },
        {
          path: "/etc/apt/sources.list.d/other.list",
          text: "deb [signed-by=/usr/share/keyrings/shared.gpg] https://other.example.com/apt stable main\n",
        },
      ],
      { ...opts, keyrings: [] },
    );
    expect(plan.remove).toEqual(["/etc/apt/sources.list.d/docker-old.list"]);
    expect(plan.keyrings).toEqual([]);
  });

  it("finds nothing to do on a clean VM: one look, no second command", async () => {
    const remote = new ScriptedRemote([{ match: "apt.sources", sudo: true, facts: sourcesFacts([ours]) }]);
    expect(await removeStaleRepositories(remote, opts)).toEqual({ changed: false, changes: [] });
    expect(remote.done).toBe(true);
  });

  it("acts in one root command: files, keyrings not owned by a package, the apt-key key", async () => {
    const old =
      "deb [arch=amd64 signed-by=/usr/share/keyrings/docker-archive-keyring.gpg] " +
      "https://download.docker.com/linux/ubuntu jammy stable";
    const remote = new ScriptedRemote([
      {
        match: "apt.sources",
        sudo: true,
        facts: sourcesFacts(
          [ours, { path: "/etc/apt/sources.list.d/docker-ce.list", text: `${old}\n` }],
          ["/etc/apt/keyrings/docker.asc"],
          "pub:-:4096:1:8D81803C0EBFCD88:1487788586:::-:::scESA::::::23::0:\nfpr:::::::::9DC858229FC7DD38854AE2D88D81803C0EBFCD88:\n",
        ),
        check: (c) => {
          expect(c).toContain("--keyring /etc/apt/trusted.gpg --with-colons --list-keys");
          expect(c).toContain(
            "if [ -e /usr/share/keyrings/docker-archive-keyring.gpg ] && ! dpkg -S " +
              "/usr/share/keyrings/docker-archive-keyring.gpg >/dev/null 2>&1; then echo",
          );
        },
      },
      {
        match: "rm -f /etc/apt/sources.list.d/docker-ce.list",
        sudo: true,
        stdout:
          "changed:removed /etc/apt/sources.list.d/docker-ce.list\nchanged:removed " +
          "/usr/share/keyrings/docker-archive-keyring.gpg\nchanged:removed key " +
          "9DC858229FC7DD38854AE2D88D81803C0EBFCD88 from /etc/apt/trusted.gpg (apt-key)\n",
        check: (c) => {
          expect(c).toContain(
            "if [ -e /usr/share/keyrings/docker-archive-keyring.gpg ] && ! dpkg -S " +
              "/usr/share/keyrings/docker-archive-keyring.gpg",
          );
          expect(c).toContain("rm -f /etc/apt/keyrings/docker.asc");
          expect(c).not.toContain("rm -f /etc/apt/keyrings/docker.gpg");
          expect(c).toContain("--delete-keys 9DC858229FC7DD38854AE2D88D81803C0EBFCD88");
          expect(c).not.toContain("rm -f /etc/apt/sources.list.d/docker.list ");
        },
      },
    ]);
    const out = await removeStaleRepositories(remote, opts);
    expect(remote.done).toBe(true);
    expect(out.changed).toBe(true);
    expect(out.changes).toHaveLength(3);
  });
});

describe("apt-repository: a VM set up when the served armour was written as <name>.asc", () => {
  it("the .asc beside a kept .gpg is what an earlier version wrote; nothing else is", () => {
    expect(supersededKeyrings("/etc/apt/keyrings/pgdg.gpg")).toEqual(["/etc/apt/keyrings/pgdg.asc"]);
    expect(supersededKeyrings("/etc/apt/keyrings/pgdg.asc")).toEqual([]);
    expect(supersededKeyrings("/usr/share/keyrings/pgdg.gpg")).toEqual([]);
  });

  const pgdgList =
    "deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] https://apt.postgresql.org/pub/repos/apt jammy-pgdg main\n";
  const pgdg: StaleRepositoryOptions = {
    uris: ["https://apt.postgresql.org/pub/repos/apt"],
    keep: { sources: ["/etc/apt/sources.list.d/pgdg.list"], keyrings: ["/etc/apt/keyrings/pgdg.gpg"] },
  };

  it("removeStaleRepositories looks for it without being told, and removes it once the source points at the .gpg", async () => {
    const remote = new ScriptedRemote([
      {
        match: "apt.sources",
        sudo: true,
        facts: sourcesFacts(
          [{ path: "/etc/apt/sources.list.d/pgdg.list", text: pgdgList }],
          ["/etc/apt/keyrings/pgdg.asc"],
        ),
        check: (c) =>
          expect(c).toContain(
            "if [ -e /etc/apt/keyrings/pgdg.asc ] && ! dpkg -S /etc/apt/keyrings/pgdg.asc >/dev/null 2>&1; then echo",
          ),
      },
      {
        match: "rm -f /etc/apt/keyrings/pgdg.asc",
        sudo: true,
        stdout: "changed:removed /etc/apt/keyrings/pgdg.asc\n",
        check: (c) => expect(c).not.toContain("pgdg.gpg"),
      },
    ]);
    expect(await removeStaleRepositories(remote, pgdg)).toEqual({
      changed: true,
      changes: ["removed /etc/apt/keyrings/pgdg.asc"],
    });
    expect(remote.done).toBe(true);
  });

  it("an .asc another source still uses stays", () => {
    const plan = planStaleRemoval(
      [
        { path: "/etc/apt/sources.list.d/pgdg.list", text: pgdgList },
        {
          path: "/etc/apt/sources.list.d/mine.list",
          text: "deb [signed-by=/etc/apt/keyrings/pgdg.asc] https://pg.example.com/apt jammy-pgdg main\n",
        },
      ],
      { ...pgdg, keyrings: supersededKeyrings("/etc/apt/keyrings/pgdg.gpg") },
    );
    expect(plan).toEqual({ remove: [], rewrite: [], keyrings: [] });
  });
});
