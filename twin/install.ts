// Installs the twin providers without a network: a filesystem mirror holding one launcher per provider
// (a small shell script that runs this checkout's TypeScript), and a Terraform CLI configuration whose
// provider_installation takes exactly those two source addresses from the mirror. Terraform then
// `init`s, checks version constraints and records the lock file as it would for the real providers;
// the production stack is not changed in any way (only TF_CLI_CONFIG_FILE points elsewhere).
//   npm run twin -- install [--dir DIR]     prints the TF_CLI_CONFIG_FILE line to export

import * as fs from "node:fs";
import * as path from "node:path";
import { twinDeployEnv } from "./deploy-env";
import { loadProviderSchema } from "./protocol/schema";

const PROJECT_ROOT = path.resolve(__dirname, "..");
export const DEFAULT_TWIN_DIR = path.join(PROJECT_ROOT, ".cache", "twin");

/** The versions the twins announce: nubes is the public build the stack pins; sless has no published one. */
export const TWIN_PROVIDERS = [
  { name: "nubes", version: "2.0.0", entry: "nubes-provider.ts" },
  { name: "sless", version: "1.0.0", entry: "sless-provider.ts" },
] as const;

function platform(): string {
  const arch = { x64: "amd64", arm64: "arm64", ia32: "386" }[process.arch as string] ?? process.arch;
  return `${process.platform}_${arch}`;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function launcher(entry: string, source: string): string {
  return [
    "#!/bin/sh",
    `# The vm-install twin of ${source}, written by \`npm run twin -- install\`: runs the TypeScript provider`,
    "# of this checkout (twin/) with the Node that installed it.",
    `exec ${sq(process.execPath)} -r ${sq(path.join(PROJECT_ROOT, "bin", "ts-register.js"))} ` +
      `${sq(path.join(PROJECT_ROOT, "twin", entry))} "$@"`,
    "",
  ].join("\n");
}

export interface TwinInstallation {
  /** The CLI configuration to use: TF_CLI_CONFIG_FILE=<this>. */
  cliConfig: string;
  mirror: string;
  /** Source address -> version, as served. */
  providers: Record<string, string>;
}

/** Writes (or rewrites, identically) the mirror and the CLI configuration under `dir`. */
export function installTwin(dir = DEFAULT_TWIN_DIR): TwinInstallation {
  const mirror = path.join(dir, "mirror");
  const providers: Record<string, string> = {};
  for (const p of TWIN_PROVIDERS) {
    const source = loadProviderSchema(p.name).source;
    const pkg = path.join(mirror, source, p.version, platform());
    fs.mkdirSync(pkg, { recursive: true });
    const file = path.join(pkg, `terraform-provider-${p.name}_v${p.version}`);
    const text = launcher(p.entry, source);
    if (!fs.existsSync(file) || fs.readFileSync(file, "utf8") !== text) fs.writeFileSync(file, text);
    fs.chmodSync(file, 0o755);
    providers[source] = p.version;
  }
  const sources = Object.keys(providers).map((s) => JSON.stringify(s));
  const cliConfig = path.join(dir, "terraformrc");
  fs.writeFileSync(
    cliConfig,
    [
      "# Written by `npm run twin -- install`: the Nubes and sless providers come from the twin's mirror,",
      "# anything else from its usual place.",
      "provider_installation {",
      "  filesystem_mirror {",
      `    path    = ${JSON.stringify(mirror)}`,
      `    include = [${sources.join(", ")}]`,
      "  }",
      "  direct {",
      `    exclude = [${sources.join(", ")}]`,
      "  }",
      "}",
      "",
    ].join("\n"),
  );
  return { cliConfig, mirror, providers };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const dirAt = args.indexOf("--dir");
  const usage = "usage: npm run twin -- install [--dir DIR]";
  if (args[0] !== "install" || (dirAt >= 0 && !args[dirAt + 1]) || args.length > (dirAt >= 0 ? 3 : 1)) {
    process.stderr.write(`twin: ${usage}\n`);
    process.exit(2);
  }
  const done = installTwin(dirAt >= 0 ? path.resolve(args[dirAt + 1]) : undefined);
  for (const [source, version] of Object.entries(done.providers))
    process.stderr.write(`twin: ${source} ${version} -> ${done.mirror}\n`);
  process.stderr.write("twin: use it with:\n");
  // The deploy environment without the placeholder tokens (the README's by-hand lines set those).
  const { TF_CLI_CONFIG_FILE, CDKTF_DISABLE_PLUGIN_CACHE_ENV, TF_PLUGIN_CACHE_DIR } = twinDeployEnv(done);
  process.stdout.write(
    `export TF_CLI_CONFIG_FILE=${TF_CLI_CONFIG_FILE} ` +
      `CDKTF_DISABLE_PLUGIN_CACHE_ENV=${CDKTF_DISABLE_PLUGIN_CACHE_ENV} TF_PLUGIN_CACHE_DIR=${TF_PLUGIN_CACHE_DIR}\n`,
  );
}
