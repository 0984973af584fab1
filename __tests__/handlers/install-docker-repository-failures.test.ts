// install-docker when the repository cannot be trusted or read: a mirror's key that is not Docker's fails before
// anything is written, naming both fingerprints, unless repo_key_fingerprint admits it (spaces and any case, as
// gpg prints it); apt-get update failing on the new source names the line and what repo_url must serve, takes
// the source and key back, and leaves an installed docker.io untouched.
import {
  JAMMY_DOCKER_IO,
  keyFetch,
  keyWrite,
  look,
  OFFICIAL_ALL,
  officialLine,
  os,
  policy,
  run,
  staleLook,
  update,
} from "./support/docker-steps";
import { UBUNTU_2204 } from "./support/fixtures";
import { ALPHA_FPR, BETA_FPR, DOCKER_FPR, pgpKey } from "./support/pgp-fixtures";
import type { Step } from "./support/scripted-remote";

describe("install-docker: a repository that cannot be trusted or read", () => {
  it(
    "a mirror serving another key: fails naming both fingerprints; nothing written, the installed docker.io left " +
      "alone",
    async () => {
      const mirror = "http://mirror.example.com/linux";
      const served: Step = { ...keyFetch("ubuntu", mirror), stdout: `amd64\n${pgpKey("beta.asc").toString("base64")}` };
      const { remote, error } = await run({ repo_url: mirror, verify: "daemon" }, [
        os(UBUNTU_2204),
        look({ cli: "24.0.7", active: "active", enabled: "enabled", packages: JAMMY_DOCKER_IO, group: ["ubuntu"] }),
        served,
      ]);
      expect(remote.done).toBe(true);
      expect(remote.calls.filter((c) => c.opts.sudo)).toEqual([]);
      expect(error?.message).toContain(
        `the key at ${mirror}/ubuntu/gpg for apt repository docker is not the expected key: expected ${DOCKER_FPR}, ` +
          `served ${BETA_FPR}`,
      );
      expect(error?.message).toContain("nothing was written to the VM");
      expect(error?.message).toContain("set repo_key_fingerprint when a mirror signs with a key of its own");
    },
  );

  it("repo_key_fingerprint as gpg prints it (spaces, any case) admits a mirror's own key", async () => {
    const mirror = "http://mirror.example.com/linux";
    const spaced = ALPHA_FPR.toLowerCase().replace(/(.{4})/g, "$1 ");
    const served: Step = { ...keyFetch("ubuntu", mirror), stdout: `amd64\n${pgpKey("alpha.asc").toString("base64")}` };
    const line = officialLine("jammy", `${mirror}/ubuntu`);
    const { error } = await run({ repo_url: mirror, repo_key_fingerprint: spaced, verify: "daemon" }, [
      os(UBUNTU_2204),
      look({}),
      served,
      keyWrite(line),
      staleLook(),
      update,
      policy(OFFICIAL_ALL, ""),
      { match: "rm -f /etc/apt/sources.list.d/docker.list /etc/apt/keyrings/docker.gpg", sudo: true },
    ]);
    // Past the key: it fails only later, on the (empty) offer of this pretend mirror.
    expect(error?.message).toMatch(/offers no docker-ce/);
  });

  /**
   * apt-get update failing on a mirror that has no Release file for jammy, then the run taking back the source and
   * key it wrote.
   */
  const mirrorWithoutRelease: Step[] = [
    {
      match: /^apt-get update /,
      sudo: true,
      code: 100,
      stderr:
        "E: The repository 'https://mirror.example.com/linux/ubuntu jammy Release' does not have a Release file.\n",
    },
    { match: "rm -f /etc/apt/sources.list.d/docker.list /etc/apt/keyrings/docker.gpg", sudo: true },
  ];

  it("apt-get update failing on the new source says which line and what repo_url must serve", async () => {
    const line = officialLine("jammy", "https://mirror.example.com/linux/ubuntu");
    const { error } = await run({ repo_url: "https://mirror.example.com/linux" }, [
      os(),
      look({}),
      keyFetch("ubuntu", "https://mirror.example.com/linux"),
      keyWrite(line),
      staleLook(),
      ...mirrorWithoutRelease,
    ]);
    expect(error?.message).toBe(
      `install-docker failed while installing: apt-get update failed with Docker's repository configured ` +
        `(/etc/apt/sources.list.d/docker.list: ${line}): ` +
        "E: The repository 'https://mirror.example.com/linux/ubuntu jammy Release' does not have a Release file.. " +
        "Check repo_url: https://mirror.example.com/linux/ubuntu must serve dists/jammy/ signed by " +
        "https://mirror.example.com/linux/ubuntu/gpg (Docker publishes only supported releases). " +
        "The source and key this run wrote were removed again (/etc/apt/sources.list.d/docker.list, " +
        "/etc/apt/keyrings/docker.gpg).",
    );
  });

  it(
    "a repository that fails over an installed docker.io: docker.io, containerd and runc are not removed (removal " +
      "comes after the index is read)",
    async () => {
      const line = officialLine("jammy", "https://mirror.example.com/linux/ubuntu");
      const { error, remote } = await run({ repo_url: "https://mirror.example.com/linux", verify: "daemon" }, [
        os(),
        look({
          cli: "24.0.7",
          active: "active",
          enabled: "enabled",
          packages: JAMMY_DOCKER_IO,
          group: ["ubuntu"],
          users: { ubuntu: ["docker"] },
        }),
        keyFetch("ubuntu", "https://mirror.example.com/linux"),
        keyWrite(line),
        staleLook(),
        ...mirrorWithoutRelease,
      ]);
      expect(remote.done).toBe(true);
      expect(remote.calls.some((c) => c.command.startsWith("apt-get remove"))).toBe(false);
      expect(error?.message).toMatch(
        /removed again .*\. The installed docker\.io, containerd, runc were not touched\.$/,
      );
    },
  );
});
