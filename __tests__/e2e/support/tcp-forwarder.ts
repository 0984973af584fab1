// A fixed address in front of sandboxes, as a public address is in front of a Nubes VM whose
// state_out_flat the stack does not read (vms[].address): a TCP forwarder on 127.0.0.1 that connects each
// client to port 22 of whatever `target()` names at that moment. Tests use it to put another machine, or
// a replacement VM, behind an address the stack's configuration keeps.
import * as net from "node:net";

export interface TcpForwarder {
  readonly port: number;
  close(): void;
}

/** `target()` returns the address to reach now, or undefined to refuse the client (its SSH retries). */
export function tcpForwarder(target: () => string | undefined): Promise<TcpForwarder> {
  const server = net.createServer((client) => {
    const address = target();
    if (!address) return void client.destroy();
    const upstream = net.connect({ host: address, port: 22 });
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end);
    upstream.on("error", end);
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ port: (server.address() as net.AddressInfo).port, close: () => server.close() }),
    ),
  );
}
