// A key problem a job meets is told in the words the deployer wrote: the setting named by SSH_KEY_SETTING
// ("vms[db].privateKeyPath (vm_key)"), not the variable the key travels in (issue 33 item 4).
import { readConnectionEnv } from "../../handlers/common/connection-env";
import { connect } from "../../handlers/common/ssh";
import { parsePrivateKey } from "../../handlers/common/ssh-keys";
import { DEFAULT_SSH_RETRY } from "../../handlers/common/ssh-retry-policy";
import { SecretScrubber } from "../../lib/shared/secrets";
import { startServer, type TestServer } from "./support/ssh-server";
import { testKey } from "./support/test-keys";

const SETTING = "vms[db].privateKeyPath (vm_key)";
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("SSH_KEY_SETTING", () => {
  test("is read with the connection, one printable line; absent, the messages say SSH_KEY as before", () => {
    const env = { VM_IP: "192.0.2.1", SSH_USER: "ubuntu", SSH_KEY: testKey("client_ed25519").private };
    expect(readConnectionEnv({ ...env, SSH_KEY_SETTING: SETTING }).keySetting).toBe(SETTING);
    expect(readConnectionEnv(env).keySetting).toBeUndefined();
    expect(() => readConnectionEnv({ ...env, SSH_KEY_SETTING: "two\nlines" })).toThrow(/SSH_KEY_SETTING: not one line/);
    expect(() =>
      readConnectionEnv({ ...env, SSH_KEY: testKey("client_ed25519").public, SSH_KEY_SETTING: SETTING }),
    ).toThrow(`SSH_KEY: the file in ${SETTING} holds a public key`);
  });

  test("a key that does not parse names the setting", () => {
    expect(() =>
      parsePrivateKey("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n", SETTING),
    ).toThrow(new RegExp(`^${SETTING.replace(/[[\]().]/g, "\\$&")} could not be read as a private key`));
    expect(() => parsePrivateKey(testKey("client_ed25519").public, SETTING)).toThrow(`${SETTING} holds a public key`);
  });

  test("a key the VM does not accept names the setting, not SSH_KEY", async () => {
    server = await startServer({ authorizedKey: testKey("other_ed25519").public });
    const err = await connect(
      {
        host: "127.0.0.1",
        port: server.port,
        user: "ubuntu",
        privateKey: testKey("client_ed25519").private,
        keySetting: SETTING,
      },
      { retry: { ...DEFAULT_SSH_RETRY, attempts: 1 }, secrets: new SecretScrubber(), sleep: async () => undefined },
    ).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      `the server accepted no method with the ssh-ed25519 key in ${SETTING}. Check vms[].user and that the key's public half`,
    );
    expect((err as Error).message).not.toContain("SSH_KEY");
  });
});
