// install-docker's check of Docker's repository: the key fetched and checked as the run does, so a key the run
// refuses fails the check in the run's words before anything runs as root; without curl (the run installs it
// first) the key is not fetched, and only the keyring's line, when one is there, says what a check cannot know.
import { JAMMY_DOCKER_IO, keyCompare, keyFetch, look, officialLine, os, run, staleLook } from "./support/docker-steps";
import { UBUNTU_2204 } from "./support/fixtures";
import { pgpKey } from "./support/pgp-fixtures";
import type { Step } from "./support/scripted-remote";

describe("install-docker: a check of Docker's repository", () => {
  const mirror = "http://mirror.example.com/linux";
  const dockerIo = {
    cli: "24.0.7",
    active: "active",
    enabled: "enabled",
    packages: JAMMY_DOCKER_IO,
    group: ["ubuntu"],
  };
  const served = (bytes: Buffer): Step => ({
    ...keyFetch("ubuntu", mirror),
    stdout: `amd64\n${bytes.toString("base64")}`,
  });
  const badKeys: [string, Buffer][] = [
    ["another key", pgpKey("beta.asc")],
    ["Docker's key with another beside it", Buffer.concat([pgpKey("docker-release.asc"), pgpKey("beta.asc")])],
    ["an HTML page", Buffer.from("<html><body>404 Not Found</body></html>\n")],
  ];

  it.each(badKeys)("served %s: the check fails as the run does, in its words, nothing run as root", async (_, key) => {
    const event = { repo_url: mirror, verify: "daemon" };
    // The words after the phase: a check's is "checking (nothing is changed)".
    const words = (e?: Error) => e?.message.replace(/^[\w-]+ failed while (?:checking \([^)]*\)|\w+): /, "");
    const check = await run({ ...event, check: true }, [os(UBUNTU_2204), look(dockerIo), served(key)]);
    const real = await run(event, [os(UBUNTU_2204), look(dockerIo), served(key)]);
    expect(check.error).toBeDefined();
    expect(words(check.error)).toEqual(words(real.error));
    expect(check.remote.calls.filter((c) => c.opts.sudo)).toEqual([]);
  });

  it("curl missing, a keyring there: one line for the keyring says why, the source's is the run's", async () => {
    const line = officialLine();
    const unknown =
      "/etc/apt/keyrings/docker.gpg compared with the key from https://download.docker.com/linux/ubuntu/gpg and " +
      "rewritten if it differs (its key is fetched once curl is installed)";
    const compare: Step = {
      ...keyCompare(line),
      stdout: `changed:${unknown}\nchanged:wrote /etc/apt/sources.list.d/docker.list (line differed)\n`,
      check: (c, o) => {
        expect(c).toContain(`unknown) echo '${`changed:${unknown}`.replace(/'/g, "'\\''")}';;`);
        expect(String(o.stdin)).toBe(`${line}\n`); // the source alone: no key to compare with
        expect(o.mutates).toBe(false);
      },
    };
    const { result, error } = await run({ check: true, compose: false, users: [] }, [
      os(),
      look({ ...dockerIo, curl: false, packages: { ...JAMMY_DOCKER_IO, curl: "" } }),
      { match: "dpkg --print-architecture", sudo: false, stdout: "amd64\n" },
      compare,
      staleLook(),
      { match: "apt-cache policy docker-ce docker-ce-cli containerd.io docker-buildx-plugin", sudo: false },
    ]);
    expect(error).toBeUndefined();
    expect(result!.would_change!.slice(0, 3)).toEqual([
      "installed curl",
      unknown,
      "wrote /etc/apt/sources.list.d/docker.list (line differed)",
    ]);
  });
});
