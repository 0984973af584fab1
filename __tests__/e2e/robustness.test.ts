// End-to-end: what a real VM throws at the installers besides apt itself, on a sandbox VM (real systemd,
// sshd, sudo and apt), through the bundle and the job runner:
//   - a dead detached step whose pid now names another, live process, and step directories long stale;
//   - a proxy the VM's users get from /etc/environment, where the direct route to the mirror is closed;
//   - a login shell that is not POSIX (tcsh, fish: from the Debian mirror);
//   - a hostile PRETTY_NAME: escape sequences, BEL, NUL, a bidi override.
// Each test gets its own sandbox (perTest): the faults would leak into each other.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as http from "node:http";
import * as net from "node:net";
import type { Sandbox } from "../../dev/sandbox/index";
import {
  describeE2E,
  dpkgStatus,
  expectSucceeded,
  type InstallerRun,
  perTest,
  root,
  runInstaller,
  withoutFrames,
} from "./support/e2e";

const T = 300_000;
const STEPS = "/run/vm-install/steps";

/** Anything a terminal would act on: C0 but \n and \t, DEL, C1, bidi controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what must not come out.
const UNPRINTABLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Asserts phase Failed; the message without stack frames. */
function expectFailed(run: InstallerRun): string {
  expect(run.phase === "Failed" ? "Failed" : `Succeeded: ${run.message}`).toBe("Failed");
  return withoutFrames(run.message);
}

function host(cmd: string, args: string[], input = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { encoding: "utf8", timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(" ")}: ${stderr || err.message}`)) : resolve(stdout),
    );
    child.stdin?.end(input);
  });
}

/** Polls a root command on the target until it prints something: what the VM itself says is ready. */
async function untilPrinted(sb: Sandbox, command: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const out = (await sb.rootExec(command)).stdout.trim();
    if (out) return out;
    if (Date.now() > deadline) throw new Error(`\`${command}\` printed nothing within ${timeoutMs} ms`);
  }
}

/**
 * A forward HTTP proxy (absolute-URI requests, and CONNECT) on the host's end of the sandbox's veth: the
 * only way out once the direct route is closed. It records what it was asked for.
 */
async function startProxy(sb: Sandbox): Promise<{ url: string; seen: string[]; stop(): Promise<void> }> {
  const seen: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      res.writeHead(400).end("absolute URI expected");
      return;
    }
    const { "proxy-connection": _, ...headers } = req.headers;
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port || 80,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on("error", (e) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(upstream);
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    const [h, p] = (req.url ?? "").split(":");
    const up = net.connect(Number(p) || 443, h, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on("error", () => client.destroy());
    client.on("error", () => up.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, sb.hostAddress, resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://${sb.hostAddress}:${port}`,
    seen,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Closes the target's direct route to the web: TCP to ports 80 and 443 anywhere but the host's end is rejected. */
async function closeDirectRoute(sb: Sandbox): Promise<void> {
  const table = `vmi_noweb_${randomBytes(3).toString("hex")}`;
  const rules = [
    `table inet ${table} {`,
    "  chain out {",
    "    type filter hook output priority 0; policy accept;",
    `    ip daddr != ${sb.hostAddress} tcp dport { 80, 443 } reject with tcp reset`,
    "  }",
    "}",
  ].join("\n");
  await host("ip", ["netns", "exec", sb.netns, "nft", "-f", "-"], `${rules}\n`);
}

describeE2E("robustness on a sandbox VM, through the bundle and the job runner", () => {
  const each = perTest(T);

  // -------------------------------------------------------------------------------------------------
  test(
    "a dead step whose pid now names a live unrelated process does not hold up the next step; stale step directories are removed",
    async () => {
      const sb = await each.sandbox();
      // The unrelated process: a sleep whose pid the dead steps' pid files name.
      const other = sb.rootSpawn("echo $$ > /run/unrelated.pid; exec sleep 600");
      try {
        const pid = await untilPrinted(sb, "cat /run/unrelated.pid 2>/dev/null");
        const started = (await root(sb, `cut -d' ' -f22 /proc/${pid}/stat`)).trim();
        const hours = (n: number) => `touch -d '${n} hours ago'`;
        await root(
          sb,
          [
            `mkdir -p -m 700 ${STEPS}`,
            // Died, its pid reused: recorded with another start time, and an older form without one.
            `d=${STEPS}/install-packages-deadbeef0001; mkdir -m 700 $d; echo 'sleep 600' > $d/cmd; echo ${Number(started) - 7} > $d/start; echo ${pid} > $d/pid`,
            `d=${STEPS}/install-docker-deadbeef0002; mkdir -m 700 $d; echo 'sleep 600' > $d/cmd; echo ${pid} > $d/pid`,
            // Long stale: one finished, one that died (no such pid any more), three hours ago.
            `d=${STEPS}/install-packages-0ld0f1n15hed; mkdir -m 700 $d; echo 0 > $d/rc; echo 1 > $d/pid; ${hours(3)} $d`,
            `d=${STEPS}/install-postgres-0ld000000dead; mkdir -m 700 $d; echo 4194304 > $d/pid; echo 5 > $d/start; ${hours(3)} $d`,
          ].join(" && "),
        );
        const run = await runInstaller(sb, "install-packages", {
          packages: ["jq"],
          update: true,
          time_budget_sec: 120,
        });
        expectSucceeded(run);
        expect(run.result.installed).toEqual(["jq"]);
        expect(run.lines.filter((l) => /waiting for step|attached to step/.test(l))).toEqual([]);
        expect((await dpkgStatus(sb, ["jq"])).jq).toBe("install ok installed");

        const left = (await root(sb, `ls ${STEPS}`)).split("\n").filter(Boolean);
        expect(left).not.toContain("install-packages-0ld0f1n15hed");
        expect(left).not.toContain("install-postgres-0ld000000dead");
        // Dead but young: kept for a while (a follower may still read it), and never mistaken for running.
        expect(left).toEqual(expect.arrayContaining(["install-packages-deadbeef0001", "install-docker-deadbeef0002"]));
        // The unrelated process was left alone.
        expect((await root(sb, `cat /proc/${pid}/cmdline | tr '\\0' ' '`)).trim()).toBe("sleep 600");
      } finally {
        other.kill();
      }
    },
    T,
  );

  // -------------------------------------------------------------------------------------------------
  test(
    "a proxy from /etc/environment, the direct route closed: the detached apt-get update and install go through it; with the proxy down, the error names it",
    async () => {
      const sb = await each.sandbox();
      const proxy = await startProxy(sb);
      try {
        await closeDirectRoute(sb);
        const direct = await sb.rootExec("curl -sS -m 10 -o /dev/null http://deb.debian.org/debian/");
        expect(direct.code).not.toBe(0); // the only way out is the proxy now
        await root(sb, `echo 'http_proxy="${proxy.url}"' >> /etc/environment`);

        const run = await runInstaller(sb, "install-packages", { packages: ["jq"], update: true });
        expectSucceeded(run);
        expect(run.result.installed).toEqual(["jq"]);
        expect((await dpkgStatus(sb, ["jq"])).jq).toBe("install ok installed");
        // Both detached steps fetched through it: the lists, then the package.
        expect(proxy.seen.some((r) => /^GET http:\/\/\S+\/dists\/bookworm\/InRelease$/.test(r))).toBe(true);
        expect(proxy.seen.some((r) => /^GET http:\/\/\S+\/pool\/\S+\/jq_\S+\.deb$/.test(r))).toBe(true);

        await proxy.stop();
        const down = await runInstaller(sb, "install-packages", { packages: ["tree"], update: true });
        const message = expectFailed(down);
        // apt-get update reached none of the sources: the job stops there, naming them (apt.ts).
        expect(message).toMatch(/apt-get update could not reach \S+ from the VM: http:\/\/\S+: Could not connect/);
        expect(message).toContain(`ran with http_proxy=${proxy.url} (from the login environment)`);
        expect((await dpkgStatus(sb, ["tree"])).tree).toBeUndefined();
      } finally {
        await proxy.stop();
      }
    },
    T,
  );

  // -------------------------------------------------------------------------------------------------
  test.each([
    ["tcsh", "/usr/bin/tcsh"],
    ["fish", "/usr/bin/fish"],
  ])(
    "the login user's shell is %s (not POSIX): an install-packages run still works",
    async (pkg, shell) => {
      const sb = await each.sandbox();
      await root(
        sb,
        `apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${pkg} && usermod -s ${shell} ubuntu`,
        180_000,
      );
      // sshd now runs every command line with `<shell> -c`: POSIX redirections, quoting and multi-line scripts mean something else there.
      expect((await root(sb, "getent passwd ubuntu | cut -d: -f7")).trim()).toBe(shell);

      const run = await runInstaller(sb, "install-packages", { packages: ["jq", "tree"], update: true });
      expectSucceeded(run);
      expect(run.result.os).toMatchObject({ id: "debian", codename: "bookworm" });
      expect([...run.result.installed].sort()).toEqual(["jq", "tree"]);
      expect(await dpkgStatus(sb, ["jq", "tree"])).toEqual({
        jq: "install ok installed",
        tree: "install ok installed",
      });
    },
    T,
  );

  // -------------------------------------------------------------------------------------------------
  test(
    "a hostile PRETTY_NAME (ESC sequences, BEL, NUL, a bidi override) comes out clean in the result and in every progress line",
    async () => {
      const sb = await each.sandbox();
      const hostile = "Debian\\033[2J\\033]0;owned\\007 GNU/Linux\\007\\000 12 \\342\\200\\256(bookworm)\\033[31m";
      await root(
        sb,
        `cp --remove-destination /usr/lib/os-release /etc/os-release && sed -i '/^PRETTY_NAME=/d' /etc/os-release && ` +
          `printf 'PRETTY_NAME="${hostile}"\\n' >> /etc/os-release`,
      );
      expect(await root(sb, "grep -a PRETTY_NAME /etc/os-release | od -c | grep -c 033")).not.toBe("0\n"); // really there
      const run = await runInstaller(sb, "install-packages", { packages: ["curl"] });
      expectSucceeded(run);
      expect(run.result.os.pretty_name).toBe("Debian GNU/Linux 12 (bookworm)");
      expect(run.message).not.toMatch(/\\u00(1b|07|00)|\\u202e/i); // nor escaped in the job's JSON
      expect(run.lines.filter((l) => UNPRINTABLE.test(l))).toEqual([]);
      expect(run.lines.some((l) => l.includes("os: Debian GNU/Linux 12 (bookworm), treated as debian bookworm"))).toBe(
        true,
      );
    },
    T,
  );
});
