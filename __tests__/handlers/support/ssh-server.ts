// An in-process SSH server (ssh2's own) on 127.0.0.1 for testing ssh.ts and the bundled handler over a
// real SSH connection: real handshake, host key, public-key authentication, exec channels.

import * as crypto from "node:crypto";
import * as net from "node:net";
import { type Connection, type ParsedKey, Server, utils } from "ssh2";
import { testKey } from "./test-keys";

export interface ExecReply {
  stdout?: string;
  stderr?: string;
  /** Exit code; null closes the channel without an exit status. @default 0 */
  code?: number | null;
  /** Never answer (for timeouts). */
  hang?: boolean;
  /** Cut the TCP connection instead of answering (a dead link). */
  drop?: boolean;
}

export interface TestServerOptions {
  /** Host private key text. @default the fixed test host key (test-keys.ts host_ed25519) */
  hostKey?: string;
  /** The one client public key accepted (OpenSSH public text or private text). */
  authorizedKey: string;
  /** The one user accepted. @default "ubuntu" */
  user?: string;
  /** Answers each exec; gets the command line and the stdin sent before EOF. */
  onExec?: (command: string, stdin: Buffer) => ExecReply | Promise<ExecReply>;
  /** @default 0 (any free port) */
  port?: number;
  /**
   * direct-tcpip channels (ssh2 forwardOut): "forward" connects to the destination asked for and pipes,
   * "refuse" fails the open (CONNECT_FAILED). @default none: ssh2 refuses them itself
   */
  tcpip?: "forward" | "refuse";
}

export interface TestServer {
  port: number;
  /** OpenSSH fingerprint of the host key, computed independently of ssh.ts. */
  hostKeySha256: string;
  /** The host public key as an authorized_keys/known_hosts line, for ssh-keygen cross-checks. */
  hostPublicLine: string;
  commands: string[];
  authAttempts: number;
  close(): Promise<void>;
}

function parsed(text: string): ParsedKey {
  const key = utils.parseKey(text);
  if (key instanceof Error) throw key;
  return Array.isArray(key) ? key[0] : key;
}

/** A free TCP port on 127.0.0.1 (nothing listens on it once this returns). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export async function startServer(opts: TestServerOptions): Promise<TestServer> {
  const hostKey = opts.hostKey ?? testKey("host_ed25519").private;
  const hostPub = parsed(hostKey).getPublicSSH();
  const allowed = parsed(opts.authorizedKey);
  const allowedPub = allowed.getPublicSSH();
  const user = opts.user ?? "ubuntu";
  const clients = new Set<Connection>();
  const state = { commands: [] as string[], authAttempts: 0 };

  const server = new Server({ hostKeys: [hostKey] }, (client) => {
    clients.add(client);
    client.on("error", () => undefined);
    client.on("close", () => clients.delete(client));
    client.on("authentication", (ctx) => {
      state.authAttempts++;
      if (
        ctx.method !== "publickey" ||
        ctx.username !== user ||
        ctx.key.algo !== allowed.type ||
        !ctx.key.data.equals(allowedPub)
      ) {
        ctx.reject(["publickey"]);
        return;
      }
      if (ctx.signature && ctx.blob && !allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo)) {
        ctx.reject(["publickey"]);
        return;
      }
      ctx.accept();
    });
    client.on("ready", () => {
      if (opts.tcpip)
        client.on("tcpip", (accept, reject, info) => {
          if (opts.tcpip === "refuse") return reject();
          const socket = net.connect(info.destPort, info.destIP, () => {
            const channel = accept();
            channel.pipe(socket).pipe(channel);
          });
          socket.on("error", () => reject());
        });
      client.on("session", (acceptSession) => {
        const session = acceptSession();
        session.on("exec", (accept, _reject, info) => {
          const stream = accept();
          state.commands.push(info.command);
          const input: Buffer[] = [];
          stream.on("data", (d: Buffer) => input.push(d));
          stream.on("end", async () => {
            const reply = (await opts.onExec?.(info.command, Buffer.concat(input))) ?? {};
            if (reply.hang) return;
            if (reply.drop) {
              (client as unknown as { _sock: net.Socket })._sock.destroy();
              return;
            }
            if (reply.stdout) stream.write(reply.stdout);
            if (reply.stderr) stream.stderr.write(reply.stderr);
            if (reply.code !== null) stream.exit(reply.code ?? 0);
            stream.end();
          });
        });
      });
    });
  });
  // A port taken in the meantime (a test that asked freePort() first) fails the test by name instead of
  // leaving it waiting for a listen that never comes.
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: Error) =>
      reject(new Error(`test SSH server: cannot listen on 127.0.0.1:${opts.port ?? 0}: ${err.message}`)),
    );
    server.listen(opts.port ?? 0, "127.0.0.1", resolve);
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    hostKeySha256: `SHA256:${crypto.createHash("sha256").update(hostPub).digest("base64").replace(/=+$/, "")}`,
    hostPublicLine: `${parsed(hostKey).type} ${hostPub.toString("base64")}`,
    get commands() {
      return state.commands;
    },
    get authAttempts() {
      return state.authAttempts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of clients) c.end();
        server.close(() => resolve());
      }),
  };
}
