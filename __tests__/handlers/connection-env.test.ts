import { normalizeKeyText, readConnectionEnv } from "../../handlers/common/connection-env";
import { ValidationError } from "../../lib/shared/validate";

const KEY =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE " +
  "KEY-----\n";
const base = { VM_IP: "192.0.2.10", SSH_USER: "ubuntu", SSH_KEY: KEY };

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    readConnectionEnv(env);
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  return [];
}

describe("readConnectionEnv", () => {
  it("reads the minimal set with port 22 and no pin", () => {
    expect(readConnectionEnv(base)).toEqual({
      host: "192.0.2.10",
      port: 22,
      user: "ubuntu",
      privateKey: KEY,
      hostKeySha256: undefined,
    });
  });

  it("reads the optional port and pin, and accepts host names and IPv6", () => {
    const pin = `SHA256:${"a".repeat(43)}`;
    expect(
      readConnectionEnv({ ...base, VM_IP: "vm1.example.com", SSH_PORT: "2222", SSH_HOST_KEY_SHA256: pin }),
    ).toMatchObject({
      host: "vm1.example.com",
      port: 2222,
      hostKeySha256: pin,
    });
    expect(readConnectionEnv({ ...base, VM_IP: "2001:db8::1" }).host).toBe("2001:db8::1");
  });

  it("reads SSH_HOST_KEY_SOURCE, one of pin, delivered, first-contact", () => {
    for (const source of ["pin", "delivered", "first-contact"]) {
      expect(readConnectionEnv({ ...base, SSH_HOST_KEY_SOURCE: source }).hostKeySource).toBe(source);
    }
    expect(readConnectionEnv(base).hostKeySource).toBeUndefined();
    expect(problems({ ...base, SSH_HOST_KEY_SOURCE: "tofu" })).toEqual([
      'SSH_HOST_KEY_SOURCE: "tofu" is not one of pin, delivered, first-contact',
    ]);
  });

  it("treats empty optional variables as unset (Terraform passes them that way)", () => {
    expect(readConnectionEnv({ ...base, SSH_PORT: "", SSH_HOST_KEY_SHA256: "" })).toMatchObject({
      port: 22,
      hostKeySha256: undefined,
    });
  });

  it("lists every problem at once, each naming its variable", () => {
    const found = problems({ VM_IP: "not a host!", SSH_PORT: "70000", SSH_HOST_KEY_SHA256: "md5:abc" });
    expect(found).toHaveLength(5);
    expect(found[0]).toMatch(/^VM_IP: "not a host!" is not an IP address or host name/);
    expect(found[1]).toMatch(/^SSH_USER: required/);
    expect(found[2]).toMatch(/^SSH_KEY: required/);
    expect(found[3]).toMatch(/^SSH_PORT: "70000" is not a port number from 1 to 65535/);
    expect(found[4]).toMatch(/^SSH_HOST_KEY_SHA256: "md5:abc" is not an OpenSSH fingerprint/);
  });

  it.each(["0", "-1", "22a", "65536"])("rejects SSH_PORT=%s", (port) => {
    expect(problems({ ...base, SSH_PORT: port })[0]).toMatch(/^SSH_PORT:/);
  });

  it("rejects a user name that is not a Unix login", () => {
    expect(problems({ ...base, SSH_USER: "root;id" })[0]).toMatch(/^SSH_USER: "root;id" is not a Unix user name/);
  });

  it("never echoes SSH_KEY, even when it is wrong", () => {
    const secretish = "not-a-key-but-secret-looking-text-1234567890";
    const found = problems({ ...base, SSH_KEY: secretish });
    expect(found[0]).toMatch(/^SSH_KEY: does not look like a private key \(\d+ characters/);
    expect(found.join("\n")).not.toContain("secret-looking");
  });

  it("says so when SSH_KEY holds the public key", () => {
    expect(problems({ ...base, SSH_KEY: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFoo user@host" })[0]).toMatch(
      /holds a public key/,
    );
  });

  it("accepts a key pasted as one line with literal \\n escapes, or with CRLF line ends", () => {
    expect(readConnectionEnv({ ...base, SSH_KEY: KEY.trim().replace(/\n/g, "\\n") }).privateKey).toBe(KEY);
    expect(readConnectionEnv({ ...base, SSH_KEY: KEY.replace(/\n/g, "\r\n") }).privateKey).toBe(KEY);
    expect(normalizeKeyText(`  ${KEY}\n\n`)).toBe(KEY);
  });
});
