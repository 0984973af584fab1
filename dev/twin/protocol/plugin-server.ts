// The go-plugin side of a Terraform provider written in Node: Terraform starts the binary with a magic
// cookie and its client certificate in the environment, reads one handshake line from stdout
// (core version | app protocol version | network | address | "grpc" | server certificate), then talks
// gRPC over mutual TLS. Besides the provider it calls grpc.health.v1.Health (is "plugin" serving?) and
// plugin.GRPCController/Shutdown (when it is done with the process).
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { makeServerCertificate } from "./certificate";

/** go-plugin's handshake for Terraform providers (hashicorp/terraform internal/plugin6/serve.go). */
export const MAGIC_COOKIE_KEY = "TF_PLUGIN_MAGIC_COOKIE";
export const MAGIC_COOKIE_VALUE = "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2";
const CORE_PROTOCOL_VERSION = 1;
const APP_PROTOCOL_VERSION = 6;
/** Schemas, states and job messages are small, but a plan of many resources is one message: go-plugin
 * allows this much. */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

const PROTO_DIR = path.resolve(__dirname, "..", "proto");

// biome-ignore lint/suspicious/noExplicitAny: proto-loader's package objects are untyped by design.
type GrpcPackage = any;

function loadProto(file: string): GrpcPackage {
  const definition = protoLoader.loadSync(path.join(PROTO_DIR, file), {
    keepCase: true,
    longs: Number,
    enums: Number,
    defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(definition);
}

/** Unary handlers by RPC name, each taking the request and returning the response. */
export type UnaryHandlers = Record<string, (request: never) => Promise<unknown>>;

function unary(handlers: UnaryHandlers, onError: (rpc: string, e: Error) => void): grpc.UntypedServiceImplementation {
  return Object.fromEntries(
    Object.entries(handlers).map(([rpc, fn]) => [
      rpc,
      (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        fn(call.request as never).then(
          (response) => callback(null, response),
          (e: Error) => {
            onError(rpc, e);
            callback({ code: grpc.status.INTERNAL, details: `${rpc} failed: ${e.message}` });
          },
        );
      },
    ]),
  );
}

/** Why this process cannot act as a plugin, or undefined when Terraform started it properly. */
export function handshakeProblem(env: NodeJS.ProcessEnv): string | undefined {
  if (env[MAGIC_COOKIE_KEY] !== MAGIC_COOKIE_VALUE) {
    return (
      "this is a Terraform provider plugin: Terraform starts it (install it with `npm run twin -- install`); " +
      "it is not meant to be run by hand"
    );
  }
  const offered = (env.PLUGIN_PROTOCOL_VERSIONS ?? String(APP_PROTOCOL_VERSION)).split(",").map((v) => v.trim());
  if (!offered.includes(String(APP_PROTOCOL_VERSION))) {
    return (
      `Terraform offered plugin protocol versions ${offered.join(",")}; ` +
      `this provider speaks only ${APP_PROTOCOL_VERSION} (Terraform 1.0 or later)`
    );
  }
  return undefined;
}

/**
 * Serves `provider` (tfplugin6.Provider handlers) the way go-plugin serves a Go provider, prints the
 * handshake line on stdout and keeps running until Terraform calls Shutdown or closes the process.
 * `log` gets diagnostics lines; stdout is reserved for the handshake.
 */
export async function servePlugin(provider: UnaryHandlers, log: (line: string) => void): Promise<void> {
  const problem = handshakeProblem(process.env);
  if (problem) {
    log(problem);
    process.exit(1);
  }
  const tfplugin6 = loadProto("tfplugin6.proto").tfplugin6;
  const pluginPkg = loadProto("go-plugin.proto").plugin;
  const health = loadProto("health.proto").grpc.health.v1;

  const server = new grpc.Server({
    "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
  });
  const onError = (rpc: string, e: Error) => log(`${rpc}: ${e.stack ?? e.message}`);
  server.addService(tfplugin6.Provider.service, unary(provider, onError));
  server.addService(health.Health.service, unary({ Check: async () => ({ status: 1 }) }, onError));
  server.addService(
    pluginPkg.GRPCController.service,
    unary(
      {
        Shutdown: async () => {
          // Answer first, then stop: Terraform waits for the reply before it closes the connection.
          setTimeout(() => server.tryShutdown(() => process.exit(0)), 10);
          return {};
        },
      },
      onError,
    ),
  );

  const clientCert = process.env.PLUGIN_CLIENT_CERT;
  const cert = clientCert ? await makeServerCertificate() : undefined;
  const credentials = cert
    ? grpc.ServerCredentials.createSsl(
        Buffer.from(clientCert!),
        [{ private_key: Buffer.from(cert.keyPem), cert_chain: Buffer.from(cert.certPem) }],
        true,
      )
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", credentials, (e, p) =>
      e ? reject(new Error(`cannot listen on 127.0.0.1: ${e.message}`)) : resolve(p),
    ),
  );
  const fields = [CORE_PROTOCOL_VERSION, APP_PROTOCOL_VERSION, "tcp", `127.0.0.1:${port}`, "grpc"];
  process.stdout.write(`${[...fields, ...(cert ? [cert.handshakeDer] : [])].join("|")}\n`);
}
