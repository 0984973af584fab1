// The runner's protocol on its own: command lines built from typed options parse back to those options
// (through a real /bin/sh), the usage text is the CLI's documented one, the result state's outputs are
// the defaults' names. The CLI as a process is invoke.test.ts; Terraform reading the state, local-target.test.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { Readable } from "node:stream";
import { resolveInvocation } from "../../lib/jobs/invocation";
import {
  type InvokeArgs,
  invokeArgv,
  invokeCommandLine,
  invokeProgram,
  JOB_ENV_VARS,
  parseInvokeArgs,
  USAGE,
  UsageError,
} from "../../lib/jobs/invoke-args";
import { RESULT_STATE_DEFAULTS, resultAsTfstate } from "../../lib/jobs/job-result-file";
import { cleanupFixtures, shellWords, tempDir } from "./fixtures";

afterAll(cleanupFixtures);

const HOSTILE = `it's "q" $HOME \`id\` $(id) \\ ; & | * ? ~ {a,b} \${path.module} \n\ttab ünï`;

describe("command line round trip", () => {
  const full: InvokeArgs = {
    installer: "install-postgres",
    name: "h1-install-postgres",
    event: { db_name: "myapp", note: HOSTILE, nested: { list: [1, "two", null, true] } },
    sshKeyFile: `/keys/${HOSTILE}`,
    timeoutSec: 1.5,
    resultFile: `/r/${HOSTILE}.json`,
    resultTfstate: `/r/${HOSTILE}.tfstate`,
    entrypoint: "main.run",
    handlersDir: `-handlers ${HOSTILE}`,
    secretEnv: [
      { field: "db_password", variable: "TF_VAR_pg_password" },
      { field: "token", variable: "API_TOKEN" },
    ],
    secretFile: [
      { field: "tls_ca_key", file: `/p/${HOSTILE}#x.json`, property: "key" },
      { field: "tls_ca_cert", file: "../.vm-install/s/postgres-ca.json", property: "cert" },
    ],
  };

  test.each<[string, InvokeArgs]>([
    ["every option, hostile values", full],
    [
      "the local target's shape",
      {
        name: "h1-install-packages",
        dir: "${path.module}/assets/x/ABC",
        eventEnv: "VM_INSTALL_EVENT",
        sshKeyFile: "/keys/h1",
        timeoutSec: 600,
        resultTfstate: "/p/.vm-install/local/h1-install-packages.tfstate",
      },
    ],
    ["an event file from stdin", { dir: "/jobs/a b", eventFile: "-" }],
    [
      "values that look like options",
      { dir: "--help", sshKeyFile: "-", resultFile: "--", name: "-x", secretEnv: [{ field: "_", variable: "_" }] },
    ],
    ["nothing but a directory", { dir: "/jobs/x" }],
  ])("%s: shell words -> parseInvokeArgs gives the options back", (_, args) => {
    const words = shellWords(invokeCommandLine(args, "/opt/it's here", "/usr/bin/node"));
    expect(words.slice(0, 4)).toEqual(invokeProgram("/opt/it's here", "/usr/bin/node"));
    expect(words.slice(4)).toEqual(invokeArgv(args));
    expect(parseInvokeArgs(words.slice(4))).toEqual(args);
  });

  test("a value starting with - goes as --flag=value, which the parser cannot take for a missing value", () => {
    expect(invokeArgv({ dir: "--help", eventFile: "-" })).toEqual(["--dir=--help", "--event-file=-"]);
    expect(invokeArgv({ dir: "/d" })).toEqual(["--dir", "/d"]);
  });

  test("the program is Node with the transpile-only loader and bin/invoke.ts of the given project", () => {
    expect(invokeProgram("/p", "/n")).toEqual(["/n", "-r", "/p/bin/ts-register.js", "/p/bin/invoke.ts"]);
  });

  test.each<[string, InvokeArgs, RegExp]>([
    ["a name the CLI refuses", { dir: "/d", name: "h1 packages" }, /--name h1 packages: letters, digits, \. _ - only/],
    [
      "a secret variable that is no env name",
      { dir: "/d", secretEnv: [{ field: "db_password", variable: "TF-VAR" }] },
      /--secret-env db_password=TF-VAR: expected FIELD=VARIABLE/,
    ],
    [
      "a timeout past setTimeout's range",
      { dir: "/d", timeoutSec: 1e9 },
      /--timeout 1000000000: expected a positive number/,
    ],
    [
      "an installer and a directory",
      { installer: "install-docker", dir: "/d" },
      /give an installer name or --dir, not both/,
    ],
    ["two event sources", { dir: "/d", event: {}, eventEnv: "E" }, /give one of --event, --event-file, --event-env/],
    [
      "a secret file property that is no name",
      { dir: "/d", secretFile: [{ field: "tls_ca_key", file: "/ca.json", property: "a.b" }] },
      /--secret-file tls_ca_key=\/ca\.json#a\.b: expected FIELD=PATH#PROPERTY/,
    ],
  ])("building refuses %s at once, saying the runner would", (_, args, why) => {
    expect(() => invokeArgv(args)).toThrow(
      /the job runner \(bin\/invoke\.ts\) would refuse the command line built for it, saying: /,
    );
    expect(() => invokeArgv(args)).toThrow(why);
  });
});

describe("parseInvokeArgs", () => {
  test("help wins over everything else", () => {
    expect(parseInvokeArgs(["--dir", "/d", "-h"])).toBe("help");
    expect(parseInvokeArgs(["--help"])).toBe("help");
  });

  test("options absent from the line are absent from the result", () => {
    expect(parseInvokeArgs(["--dir", "d"])).toEqual({ dir: "d" });
    expect(Object.keys(parseInvokeArgs(["x"]))).toEqual(["installer"]);
  });

  test("errors are UsageErrors", () => {
    expect(() => parseInvokeArgs(["--bogus"])).toThrow(UsageError);
    expect(() => parseInvokeArgs(["a", "b"])).toThrow(new UsageError("one installer at a time (got a, b)"));
  });
});

describe("usage text", () => {
  test("is the CLI's documented text, option for option", () => {
    expect(USAGE).toBe(`usage: npm run invoke -- <installer> [options]
       npm run invoke -- --dir DIR [options]

  <installer>           bundle handlers/<installer>/handler.ts (as the stack does) and run it
  --dir DIR             run an already-bundled job directory instead
  --event JSON          the event, one JSON object (default {})
  --event-file FILE     read the event from FILE; "-" reads stdin
  --timeout SEC         kill the job after SEC seconds (default 900)
  --ssh-key-file PATH   read SSH_KEY from PATH instead of the environment
  --result-file PATH    also write the final {"phase","message"} object to PATH (atomically)
  --result-tfstate PATH also write it as the outputs of a Terraform state file (what the local target reads back)
  --log-dir DIR         also keep the job's progress in DIR/<name>-<UTC time>.log (0600, secrets scrubbed;
                        the last 5 runs of each job are kept)
  --event-env NAME      read the event (JSON) from environment variable NAME
  --secret-env F=VAR    set event field F from environment variable VAR (e.g. db_password=TF_VAR_pg_password),
                        so a secret is on no command line and in no file; repeatable
  --secret-file F=PATH#P set event field F from string property P of the JSON file PATH (e.g.
                        tls_ca_key=.vm-install/web/postgres-ca.json#key: the stack's CA); repeatable
  --name NAME           the job's name, shown in progress and in a failure
  --job-slots N:DIR     run only while fewer than N runners hold a slot file in DIR, else wait (a stack's
                        parallelism, held by its local jobs whatever -parallelism Terraform was given)
  --entrypoint M.F      module.function to call (default handler.install)
  --handlers-dir DIR    where <installer> folders are (default handlers/ of this project)
  -h, --help            this text

The job gets only these variables from the environment: VM_IP, SSH_USER, SSH_KEY, SSH_KEY_SETTING, SSH_PORT, SSH_HOST_KEY_SHA256, SSH_HOST_KEY_SOURCE.
Progress is printed to stdout; the last stdout line is {"phase": "Succeeded"|"Failed", "message": ...}.`);
  });

  test("every option it lists is one the parser accepts", () => {
    const flags = [...USAGE.matchAll(/^ {2}(?:-h, )?(--[a-z-]+)/gm)].map((m) => m[1]);
    expect(flags).toHaveLength(16);
    for (const flag of flags) {
      const argv =
        flag === "--help"
          ? [flag]
          : flag === "--secret-env"
            ? ["--dir", "/d", flag, "a=B"]
            : flag === "--secret-file"
              ? ["--dir", "/d", flag, "a=/f.json#b"]
              : flag === "--dir"
                ? [flag, "/d"]
                : [
                    "--dir",
                    "/d",
                    flag,
                    flag === "--event"
                      ? "{}"
                      : flag === "--timeout"
                        ? "5"
                        : flag === "--entrypoint"
                          ? "a.b"
                          : flag === "--job-slots"
                            ? "2:d"
                            : "x",
                  ];
      expect(() => parseInvokeArgs(argv)).not.toThrow();
    }
  });
});

describe("resolveInvocation", () => {
  test("the job env is JOB_ENV_VARS from the given environment and nothing else; secret fields join the event", async () => {
    const dir = tempDir();
    const keyFile = path.join(dir, "key");
    fs.writeFileSync(keyFile, "KEY-MATERIAL", { mode: 0o600 });
    const args = parseInvokeArgs([
      "--dir",
      dir,
      "--event-env",
      "EV",
      "--ssh-key-file",
      keyFile,
      "--secret-env",
      "db_password=PW",
    ]) as InvokeArgs;
    const inv = await resolveInvocation(
      args,
      { VM_IP: "10.0.0.9", SSH_USER: "u", SSH_PORT: "", OTHER: "no", EV: '{"a":1}', PW: "hunter22" },
      Readable.from([]),
    );
    expect(inv.env).toEqual({ VM_IP: "10.0.0.9", SSH_USER: "u", SSH_KEY: "KEY-MATERIAL" });
    expect(Object.keys(inv.env).every((k) => (JOB_ENV_VARS as readonly string[]).includes(k))).toBe(true);
    expect(inv.event).toEqual({ a: 1, db_password: "hunter22" });
    expect(inv.secrets).toEqual(["hunter22", "KEY-MATERIAL"]);
    expect(inv).toMatchObject({ dir, entrypoint: "handler.install", timeoutSec: 900 });
  });

  test("--event-file - reads the given stdin; the parsed args are not changed by the secrets", async () => {
    const args = parseInvokeArgs(["--dir", tempDir(), "--event", '{"x":1}', "--secret-env", "token=T"]) as InvokeArgs;
    const inv = await resolveInvocation(args, { T: "t0k3n-value" });
    expect(inv.event).toEqual({ x: 1, token: "t0k3n-value" });
    expect(args.event).toEqual({ x: 1 });
    const fromStdin = await resolveInvocation(
      parseInvokeArgs(["--dir", tempDir(), "--event-file", "-"]) as InvokeArgs,
      {},
      Readable.from([Buffer.from('{"from":"stdin"}')]),
    );
    expect(fromStdin.event).toEqual({ from: "stdin" });
  });
});

describe("--secret-file", () => {
  const caJson = (text: string) => {
    const file = path.join(tempDir(), "postgres-ca.json");
    fs.writeFileSync(file, text, { mode: 0o600 });
    return file;
  };

  test("each field from its property of the file; every value is scrubbed", async () => {
    const file = caJson(JSON.stringify({ cert: "CERT-PEM", key: "KEY-PEM" }));
    const argv = [
      "--dir",
      tempDir(),
      "--secret-file",
      `tls_ca_key=${file}#key`,
      "--secret-file",
      `tls_ca_cert=${file}#cert`,
    ];
    const inv = await resolveInvocation(parseInvokeArgs(argv) as InvokeArgs, {});
    expect(inv.event).toEqual({ tls_ca_key: "KEY-PEM", tls_ca_cert: "CERT-PEM" });
    expect(inv.secrets).toEqual(["KEY-PEM", "CERT-PEM"]);
  });

  test.each([
    [
      "no file",
      (dir: string) => path.join(dir, "none.json"),
      /cannot read .*none\.json as JSON \(ENOENT.*run cdktf synth or deploy/,
    ],
    ["not JSON", () => caJson("-----BEGIN"), /cannot read .*postgres-ca\.json as JSON/],
    ["no such property", () => caJson('{"cert":"C"}'), /postgres-ca\.json holds no key \(the event's tls_ca_key\)/],
    ["an empty property", () => caJson('{"key":""}'), /holds no key/],
  ])("%s: refused, naming the option and the file", async (_, make, why) => {
    const dir = tempDir();
    const args = parseInvokeArgs(["--dir", dir, "--secret-file", `tls_ca_key=${make(dir)}#key`]) as InvokeArgs;
    await expect(resolveInvocation(args, {})).rejects.toThrow(/^--secret-file tls_ca_key=/);
    await expect(resolveInvocation(args, {})).rejects.toThrow(why);
  });
});

describe("result state", () => {
  test("its outputs are exactly the names the target reads, with their defaults' type", () => {
    const state = JSON.parse(resultAsTfstate({ phase: "Failed", message: "boom" }, "h1-install-docker"));
    expect(Object.keys(state.outputs).sort()).toEqual(Object.keys(RESULT_STATE_DEFAULTS).sort());
    expect(state).toEqual({
      version: 4,
      terraform_version: "1.0.0",
      serial: 1,
      lineage: "vm-install-h1-install-docker",
      outputs: { phase: { value: "Failed", type: "string" }, message: { value: "boom", type: "string" } },
      resources: [],
    });
  });
});
