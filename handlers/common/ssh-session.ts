// A connected VM as a Remote: every command one exec channel, and a connection lost after `ready`
// rejects every command still running (it would otherwise wait forever for an exit status).
import type { Duplex } from "node:stream";
import type { Client, ClientChannel } from "ssh2";
import type { SecretScrubber } from "../../lib/shared/secrets";
import {
  ExecRemote,
  type RawExec,
  type RawExecResult,
  type Remote,
  type RunOptions,
  type RunResult,
  TunnelRefused,
} from "./exec";
import { formatDuration } from "./progress";

/** A connected VM: a Remote plus what was learnt while connecting. Close it when done. */
export class SshSession implements Remote {
  private readonly remote: ExecRemote;
  private readonly pending = new Set<(err: Error) => void>();
  private deadReason: string | undefined;

  constructor(
    private readonly client: Client,
    /** "user@host:port", as messages name the VM. */
    readonly target: string,
    /** The host key's fingerprint as OpenSSH prints it. */
    readonly hostKeySha256: string,
    /** The host key's algorithm, e.g. "ssh-ed25519". */
    readonly hostKeyType: string,
    /** How many attempts connecting took. */
    readonly attempts: number,
    user: string,
    secrets: SecretScrubber,
    now: () => number,
  ) {
    this.remote = new ExecRemote(this.rawExec, { target, user, secrets, now });
    const lost = (why: string) => {
      if (this.deadReason) return;
      this.deadReason = why;
      const err = new Error(`the SSH connection was lost (${why})`);
      for (const reject of [...this.pending]) reject(err);
      this.pending.clear();
    };
    // These stay for the connection's whole life: an 'error' event without a listener would crash the
    // process, and a command waiting on a dead channel would never settle.
    client.on("error", (err: Error) => lost(err.message));
    client.on("end", () => lost("the server ended the connection"));
    client.on("close", () => lost("connection closed"));
  }

  /** True once the connection is gone (lost or closed): a new one is needed for anything more. */
  get lost(): boolean {
    return this.deadReason !== undefined;
  }

  run(command: string, opts?: RunOptions): Promise<RunResult> {
    return this.remote.run(command, opts);
  }

  /**
   * A direct-tcpip channel to host:port from the VM (ssh2 forwardOut). sshd's "administratively
   * prohibited" (AllowTcpForwarding no, or the key's no-port-forwarding) and its failed connect both
   * reject with a TunnelRefused naming which it was.
   */
  tunnel(host: string, port: number, opts: { timeoutMs?: number } = {}): Promise<Duplex> {
    return new Promise<Duplex>((resolve, reject) => {
      if (this.deadReason) {
        reject(new Error(`the SSH connection is gone (${this.deadReason})`));
        return;
      }
      const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.pending.delete(onLost);
        fn();
      };
      const onLost = (err: Error) => settle(() => reject(err));
      this.pending.add(onLost);
      const ms = opts.timeoutMs ?? 30_000;
      const timer = setTimeout(
        () =>
          settle(() => reject(new Error(`no TCP channel to ${where} from ${this.target} after ${formatDuration(ms)}`))),
        ms,
      );
      this.client.forwardOut("127.0.0.1", 0, host, port, (err, stream) => {
        if (settled) {
          stream?.close();
          return;
        }
        if (!err) return settle(() => resolve(stream));
        const reason = (err as Error & { reason?: number }).reason;
        const description = err.message.replace(/^\(SSH\) Channel open failure: /, "");
        settle(() =>
          reject(
            reason === 1
              ? new TunnelRefused(
                  `the VM's sshd refused a TCP channel to ${where} ` +
                    `(${description || "administratively prohibited"}): ` +
                    "TCP forwarding is off for this login (AllowTcpForwarding, DisableForwarding or the key's " +
                    "no-port-forwarding)",
                  true,
                )
              : new TunnelRefused(
                  `${this.target} could not connect to ${where}: ${description || "open failed"}`,
                  false,
                ),
          ),
        );
      });
    });
  }

  private readonly rawExec: RawExec = (commandLine, { stdin, timeoutMs }) =>
    new Promise<RawExecResult>((resolve, reject) => {
      if (this.deadReason) {
        reject(new Error(`the SSH connection is gone (${this.deadReason})`));
        return;
      }
      let settled = false;
      let channel: ClientChannel | undefined;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.pending.delete(onLost);
        fn();
      };
      const onLost = (err: Error) => settle(() => reject(err));
      this.pending.add(onLost);
      const timer = setTimeout(() => {
        settle(() =>
          reject(
            new Error(
              `timed out after ${formatDuration(timeoutMs)}; the channel was closed (the command may still be ` +
                `running on the VM)`,
            ),
          ),
        );
        try {
          channel?.signal("KILL");
          channel?.close();
        } catch {
          // the channel is already gone
        }
      }, timeoutMs);

      this.client.exec(commandLine, (err, stream) => {
        if (err) {
          settle(() => reject(new Error(`could not start the command: ${err.message}`)));
          return;
        }
        channel = stream;
        const out = new Collector();
        const errOut = new Collector();
        let code: number | null = null;
        let signal: string | undefined;
        stream.on("data", (chunk: Buffer) => out.push(chunk));
        stream.stderr.on("data", (chunk: Buffer) => errOut.push(chunk));
        stream.on("exit", (exitCode: number | null, signalName?: string) => {
          code = typeof exitCode === "number" ? exitCode : null;
          signal = signalName ?? undefined;
        });
        stream.on("close", () =>
          settle(() => resolve({ code, signal, stdout: out.buffer(), stderr: errOut.buffer() })),
        );
        stream.on("error", (streamErr: Error) => settle(() => reject(streamErr)));
        stream.end(stdin);
      });
    });

  /**
   * Ends the connection: the disconnect and the end of the stream are written, and it resolves without
   * waiting for the server to close its side, a round trip that decides nothing (issue 30): every command
   * has already ended, and the job exits right after.
   */
  close(): Promise<void> {
    if (this.deadReason) return Promise.resolve();
    this.deadReason = "closed by the handler";
    this.client.end();
    return new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Keeps at most `limit` bytes of output, dropping the oldest: the end of a log is what explains it. */
class Collector {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private dropped = false;
  constructor(private readonly limit = 8 * 1024 * 1024) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.limit && this.chunks.length > 1) {
      this.bytes -= this.chunks.shift()!.length;
      this.dropped = true;
    }
  }
  buffer(): Buffer {
    const data = Buffer.concat(this.chunks);
    return this.dropped ? Buffer.concat([Buffer.from("[earlier output dropped]\n"), data]) : data;
  }
}
