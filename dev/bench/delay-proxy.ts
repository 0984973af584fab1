// A long link in user space (tc netem is not available here): a TCP forwarder on 127.0.0.1 in front of one
// host:port that holds every chunk, each way, for half the round-trip time. Each direction is a queue of
// (due time, chunk): chunks leave in arrival order, each RTT/2 after it came, so a stream keeps its
// throughput (two chunks sent 10 ms apart arrive 10 ms apart) where a sleep per chunk would serialize them.
import * as net from "node:net";

export interface DelayProxy {
  readonly port: number;
  readonly rttMs: number;
  /** TCP connections accepted so far (a side that opens more sessions pays more handshakes). */
  readonly connections: number;
  close(): Promise<void>;
}

export interface DelayProxyOptions {
  /** Where to forward to. */
  host: string;
  port: number;
  /** Round-trip time added: each direction waits half of it. */
  rttMs: number;
}

/**
 * Passes what `from` sends on to `to`, each chunk `delayMs` after it arrived, in order; its end (FIN) too,
 * after the last chunk. While `to` cannot take more, `from` is paused (TCP's own back-pressure).
 */
function delayedPipe(from: net.Socket, to: net.Socket, delayMs: number): void {
  const queue: { due: number; chunk: Buffer | null }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let waitingDrain = false;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0].due <= now) {
      const { chunk } = queue.shift() as { chunk: Buffer | null };
      if (to.destroyed) return;
      if (chunk === null) to.end();
      else if (!to.write(chunk) && !waitingDrain) {
        waitingDrain = true;
        from.pause();
        to.once("drain", () => {
          waitingDrain = false;
          from.resume();
        });
      }
    }
    // A timer may fire a fraction of a millisecond early: it is then set again for the rest.
    if (queue.length > 0) timer = setTimeout(flush, Math.max(0, queue[0].due - now));
  };
  const push = (chunk: Buffer | null) => {
    queue.push({ due: performance.now() + delayMs, chunk });
    if (!timer) flush();
  };
  from.on("data", (chunk: Buffer) => push(chunk));
  from.on("end", () => push(null));
  from.on("close", () => {
    if (timer && to.destroyed) clearTimeout(timer);
  });
}

/** Starts the proxy on 127.0.0.1 (a free port); every accepted connection gets its own upstream one. */
export async function startDelayProxy(o: DelayProxyOptions): Promise<DelayProxy> {
  if (!Number.isFinite(o.rttMs) || o.rttMs < 0) throw new Error(`delay proxy: rttMs must be >= 0, got ${o.rttMs}`);
  const oneWay = o.rttMs / 2;
  let connections = 0;
  const open = new Set<net.Socket>();
  // Half-open allowed: one side's FIN travels (delayed) to the other while the reverse direction still flows.
  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    connections++;
    const upstream = net.connect({ host: o.host, port: o.port, allowHalfOpen: true, noDelay: true });
    for (const s of [client, upstream]) {
      open.add(s);
      s.on("close", () => open.delete(s));
    }
    // Nagle's algorithm would hold small packets back on top of the delay asked for.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    delayedPipe(client, upstream, oneWay);
    delayedPipe(upstream, client, oneWay);
    const fail = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", fail);
    upstream.on("error", fail);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        port,
        rttMs: o.rttMs,
        get connections() {
          return connections;
        },
        close: () =>
          new Promise<void>((done) => {
            for (const s of open) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
