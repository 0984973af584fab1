// daemon.json as settings: the pass-through's rules (the class of inputs, refused ones named), the merge
// and the restart-or-reload decision (pure), dockerd's journal read for its own words, the mirror probe's
// reading, and the handler end to end on the scripted double: a check foresees, a run writes and
// restarts, a file dockerd refuses is rolled back.
import {
  DAEMON_JSON,
  daemonConfigRule,
  MIRROR_URL,
  parseDaemonFile,
  planDaemonConfig,
  REFUSED_KEYS,
  TYPED_KEYS,
} from "../../handlers/install-docker/daemon-config";
import { dockerdLines } from "../../handlers/install-docker/daemon-config-apply";
import { dockerdError } from "../../handlers/install-docker/daemon-running";
import { handler } from "../../handlers/install-docker/handler";
import { mirrorProblems, parseMirrors, probeCommand } from "../../handlers/install-docker/mirror-probe";
import { validate } from "../../lib/shared/validate";
import { beforeWrite, CURSOR } from "./support/docker-journal";
import { dockerLook } from "./support/docker-look";
import { DEBIAN_12 } from "./support/fixtures";
import { grantsRead } from "./support/grants-steps";
import { renameOf } from "./support/remote-writes";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

const DEFAULTS = { log_rotation: true, log_max_size: "10m", log_max_file: 3, registry_mirrors: [], daemon_config: {} };
const absent = parseDaemonFile(false, "");
const ROTATED_TEXT = JSON.stringify({ "log-driver": "json-file", "log-opts": { "max-size": "10m", "max-file": "3" } });
const file = (v: unknown) => parseDaemonFile(true, JSON.stringify(v, null, 2));
const problems = (v: unknown) => {
  const out: string[] = [];
  daemonConfigRule(v, "daemon_config", out);
  return out;
};

describe("daemonConfig (the pass-through): dockerd-shaped keys, JSON values, nothing typed, refused or secret", () => {
  it("accepts dockerd options of every JSON kind", () => {
    const ok = {
      "live-restore": true,
      "max-concurrent-downloads": 6,
      "default-address-pools": [{ base: "172.30.0.0/16", size: 24 }],
      "default-ulimits": { nofile: { Name: "nofile", Hard: 64000, Soft: 64000 } },
      features: { buildkit: true },
      "exec-opts": ["native.cgroupdriver=systemd"],
      "default-runtime": null,
    };
    expect(problems(ok)).toEqual([]);
    expect(validate(daemonConfigRule, ok, "event")).toEqual(ok);
  });

  it.each([
    ["Live_Restore", /not a dockerd option name/],
    ["liveRestore", /not a dockerd option name/],
    ["-debug", /not a dockerd option name/],
    ["debug ", /not a dockerd option name/],
    ["registry-mirrors", /set by a typed setting/],
    ["log-driver", /set by a typed setting/],
    ["log-opts", /set by a typed setting/],
    ["hosts", /refused: exposes the Docker API/],
    ["data-root", /refused: moves every image/],
    // The same data by another name: remapped (hidden) or read through another driver, or the API handed to a plugin.
    ["userns-remap", /refused: .*images and containers/],
    ["storage-driver", /refused: .*images and containers/],
    ["authorization-plugins", /refused: .*plugin/],
    ["registry-password", /looks like a credential/],
  ])("refuses the key %j", (key, why) => {
    const got = problems({ [key]: true });
    expect(got).toHaveLength(1);
    expect(got[0]).toMatch(`daemon_config.${key}: `);
    expect(got[0]).toMatch(why);
  });

  it("accepts an address-like value without credentials (a mail address, a proxy without user)", () => {
    expect(problems({ labels: ["maintainer=ops@example.org"], proxies: { "http-proxy": "proxy:3128" } })).toEqual([]);
    expect(problems({ proxies: { "no-proxy": "localhost,127.0.0.1,.internal" } })).toEqual([]);
  });

  it("refuses every typed and refused key, whatever its value", () => {
    for (const key of [...TYPED_KEYS, ...Object.keys(REFUSED_KEYS)]) expect(problems({ [key]: [] })).toHaveLength(1);
  });

  it.each([
    [{ proxies: { "http-proxy": "http://user:pw@proxy:3128" } }, /a URL with credentials/],
    // Credentials in every URL form dockerd (Go's http.ProxyFromEnvironment) takes: no scheme, no "//", a list.
    [{ proxies: { "http-proxy": "user:pw@proxy:3128" } }, /proxies\.http-proxy: a URL with credentials/],
    [{ proxies: { "https-proxy": "//user:pw@proxy" } }, /a URL with credentials/],
    [{ proxies: { "http-proxy": "user:p%40w@10.0.0.1" } }, /a URL with credentials/],
    [{ proxies: { "http-proxy": "user@proxy:3128" } }, /a URL with credentials/],
    [{ "http-proxy": "SOCKS5://u:p@proxy:1080" }, /a URL with credentials/],
    [{ labels: ["a=1", "mirror=https://u:p@m.example"] }, /labels\[1\]: a URL with credentials/],
    [{ labels: ["a\nb"] }, /control characters/],
    [{ "x-thing": { auth: { token: "t" } } }, /x-thing\.auth\.token: looks like a credential/],
    [{ "shutdown-timeout": Number.NaN }, /not a finite number/],
    [[], /expected an object/],
    ["live-restore", /expected an object/],
    [{ labels: ["x".repeat(20_000)] }, /bytes of JSON; at most 16384/],
  ])("refuses %j", (value, why) => {
    expect(problems(value).join("\n")).toMatch(why);
  });
});

describe("registryMirrors' URL rule", () => {
  it.each(["http://10.200.1.1:5000", "https://mirror.example.org", "https://mirror.example.org/", "http://m:1"])(
    "accepts %s",
    (u) => expect(MIRROR_URL.test(u)).toBe(true),
  );
  it.each([
    "ftp://m",
    "http://user:pw@m",
    "http://m/path",
    "http://m:5000/v2/",
    "m:5000",
    "http://m?x=1",
    "http://m; rm -rf /",
    "http://-m",
  ])("refuses %s", (u) => expect(MIRROR_URL.test(u)).toBe(false));
});

describe("planDaemonConfig (pure): merged, written only when it differs, restart only when a key needs it", () => {
  it("no file, the defaults: log rotation, each key old -> new, a restart", () => {
    const plan = planDaemonConfig(absent, DEFAULTS, true)!;
    expect(JSON.parse(plan.next)).toEqual({
      "log-driver": "json-file",
      "log-opts": { "max-size": "10m", "max-file": "3" },
    });
    expect(plan.lines).toEqual([
      `${DAEMON_JSON}: log-driver (unset) -> "json-file"`,
      `${DAEMON_JSON}: log-opts (unset) -> {"max-size":"10m","max-file":"3"}`,
      "restarted docker.service (log-driver, log-opts)",
    ]);
    expect(plan.restart).toBe(true);
  });

  it("as asked already (key order and value types as dockerd reads them): nothing", () => {
    const now = { "log-opts": { "max-file": "3", "max-size": "10m" }, "log-driver": "json-file" };
    expect(planDaemonConfig(file(now), DEFAULTS, true)).toBeUndefined();
  });

  it("keeps every key the settings do not own, in its place, and json-file's other log-opts", () => {
    const now = { "userland-proxy": false, "log-driver": "json-file", "log-opts": { labels: "app" }, iptables: true };
    const plan = planDaemonConfig(file(now), { ...DEFAULTS, log_max_file: 5 }, true)!;
    expect(Object.keys(JSON.parse(plan.next))).toEqual(["userland-proxy", "log-driver", "log-opts", "iptables"]);
    expect(JSON.parse(plan.next)["log-opts"]).toEqual({ labels: "app", "max-size": "10m", "max-file": "5" });
    expect(plan.changed).toEqual(["log-opts"]);
  });

  it("log rotation off and nothing else asked: the file is not touched, whatever it holds", () => {
    const now = { "log-driver": "journald", hosts: ["tcp://0.0.0.0:2375"] };
    expect(planDaemonConfig(file(now), { ...DEFAULTS, log_rotation: false }, true)).toBeUndefined();
    expect(planDaemonConfig(absent, { ...DEFAULTS, log_rotation: false }, true)).toBeUndefined();
  });

  it("a reload only when docker info shows one of the changed keys (the outcome is read from it), else a restart", () => {
    const rotated = JSON.parse(ROTATED_TEXT);
    const s = { ...DEFAULTS, daemon_config: { "max-concurrent-downloads": 6 } };
    const plan = planDaemonConfig(file(rotated), s, true)!;
    expect(plan.restart).toBe(true);
    expect(plan.lines.at(-1)).toBe("restarted docker.service (max-concurrent-downloads: docker info shows none)");
    const both = planDaemonConfig(
      file(rotated),
      { ...s, daemon_config: { "max-concurrent-downloads": 6, debug: true } },
      true,
    )!;
    expect(both.restart).toBe(false);
  });

  it("only keys dockerd reloads changed, dockerd running: a reload; not running: a restart (which starts it)", () => {
    const rotated = { "log-driver": "json-file", "log-opts": { "max-size": "10m", "max-file": "3" } };
    const s = { ...DEFAULTS, registry_mirrors: ["http://10.200.1.1:5000"], daemon_config: { "live-restore": true } };
    const reload = planDaemonConfig(file(rotated), s, true)!;
    expect(reload.restart).toBe(false);
    expect(reload.lines.at(-1)).toBe(
      "reloaded docker.service (registry-mirrors, live-restore: applied without a restart)",
    );
    expect(planDaemonConfig(file(rotated), s, false)!.lines.at(-1)).toBe(
      "restarted docker.service (it was not running)",
    );
    const mixed = planDaemonConfig(file(rotated), { ...s, daemon_config: { "userland-proxy": false } }, true)!;
    expect(mixed.restart).toBe(true);
    expect(mixed.lines.at(-1)).toBe("restarted docker.service (userland-proxy)");
  });

  it("an empty registryMirrors leaves the admin's mirrors alone; a pass-through key overrides the file's", () => {
    const now = { "registry-mirrors": ["https://by-hand.example"], "live-restore": false };
    const plan = planDaemonConfig(
      file(now),
      { ...DEFAULTS, log_rotation: false, daemon_config: { "live-restore": true } },
      true,
    )!;
    expect(JSON.parse(plan.next)).toEqual({ "registry-mirrors": ["https://by-hand.example"], "live-restore": true });
    expect(plan.lines[0]).toBe(`${DAEMON_JSON}: live-restore false -> true`);
  });

  it("a file dockerd cannot read is told apart from an empty one", () => {
    expect(parseDaemonFile(true, "").kind).toBe("json");
    expect(parseDaemonFile(true, "{ not json").kind).toBe("bad");
    expect(parseDaemonFile(true, "[1]")).toMatchObject({ kind: "bad", problem: "it is JSON but not an object" });
  });
});

describe("dockerd's own words from its journal", () => {
  const journal = [
    "Dec 05 02:10:00 vm systemd[1]: Starting docker.service - Docker Application Container Engine...",
    "Dec 05 02:10:00 vm dockerd[812]: unable to configure the Docker daemon with file /etc/docker/daemon.json: " +
      "the following directives don't match any configuration option: no-such-option",
    "Dec 05 02:10:00 vm systemd[1]: docker.service: Main process exited, code=exited, status=1/FAILURE",
    "Dec 05 02:10:00 vm systemd[1]: Failed to start docker.service - Docker Application Container Engine.",
  ].join("\n");
  it("keeps dockerd's lines only, without the syslog prefix, its errors first", () => {
    expect(dockerdLines(journal)).toEqual([
      "unable to configure the Docker daemon with file /etc/docker/daemon.json: the following directives don't " +
        "match any configuration option: no-such-option",
    ]);
    expect(dockerdError(['time="x" level=info msg="a"', 'time="x" level=error msg="b"'])).toBe(
      'time="x" level=error msg="b"',
    );
    expect(dockerdError([])).toBe("(dockerd wrote nothing to the journal)");
    // dockerd's own level field decides, never a value quoted in its message; a configuration dump is no word.
    const dump = `time="x" level=info msg="Reloaded configuration: {\\"labels\\":[\\"n=level=error\\"]${"y".repeat(900)}}"`;
    expect(dockerdError([dump, 'time="x" level=warning msg="w"'])).toBe('time="x" level=warning msg="w"');
    const long = dockerdError([`time="x" level=error msg="${"z".repeat(900)}\u001b[2J"`]);
    expect(long.length).toBeLessThanOrEqual(301);
    expect(long).not.toMatch("\u001b");
  });
});

describe("the mirror probe", () => {
  it("reads docker info's mirrors and names those that do not answer as a registry", () => {
    expect(parseMirrors('["http://10.200.1.1:5000/"]\n')).toEqual(["http://10.200.1.1:5000/"]);
    expect(parseMirrors("null")).toEqual([]);
    expect(parseMirrors("garbage")).toEqual([]);
    expect(
      mirrorProblems(
        "http://a:1/\t7\tcurl: (7) Failed to connect to a port 1: Connection refused\nhttp://b/\t0\t200\n" +
          "http://c/\t0\t404\nhttp://d/\t0\t401\nhttp://e:9/\t1\ttcp\n",
      ),
    ).toEqual([
      "registry mirror http://a:1/ does not answer (curl: (7) Failed to connect to a port 1: Connection refused)",
      "registry mirror http://c/ answers HTTP 404 on /v2/: not a registry",
      "registry mirror http://e:9/ does not answer (tcp)",
    ]);
  });
  it("quotes what the daemon reports (a mirror's URL never reaches the shell bare)", () => {
    const cmd = probeCommand(["http://m:5000/'; touch /tmp/x; '"]);
    // Every occurrence sits inside a quoted word ('...'\''; touch ...), none bare.
    const bare = cmd.split("touch /tmp/x").length - 1;
    expect(bare).toBe(2);
    expect(cmd.split("'\\''; touch /tmp/x").length - 1).toBe(bare);
  });
});

// ---------------------------------------------------------------------------------------------------
// The handler on the scripted double: Docker installed and running (Debian 12, distro channel).

const look = dockerLook;
const os: Step = { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } };
const info: Step = { match: "docker info --format '{{.ServerVersion}}'", sudo: true, stdout: "20.10.24\n" };
const event = { channel: "distro", compose: false, users: ["admin"], verify: "daemon" };
const run = (e: unknown, script: Step[]) => runScripted(handler, e, script);
const ROTATED = JSON.stringify({ "log-driver": "json-file", "log-opts": { "max-size": "10m", "max-file": "3" } });
const noGrants: Step = grantsRead();
const recorded: Step = { match: "/var/lib/vm-install/.grants.json.XXXXXX", sudo: true };
const LINES = [
  `${DAEMON_JSON}: log-driver (unset) -> "json-file"`,
  `${DAEMON_JSON}: log-opts (unset) -> {"max-size":"10m","max-file":"3"}`,
  "restarted docker.service (log-driver, log-opts)",
];

describe("install-docker with daemon.json (scripted double)", () => {
  it("check mode foresees each key and the restart, and changes nothing", async () => {
    const { result, remote, error } = await run({ ...event, check: true }, [os, look(undefined), info]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.filter((c) => c.opts.mutates)).toEqual([]);
    expect(result).toMatchObject({ changed: false, changes: [], would_change: LINES });
  });

  it("a run writes the merged file on stdin as root, restarts, and reports the same lines", async () => {
    const admin = '{\n  "userland-proxy": false\n}';
    const { result, remote, error } = await run(event, [
      os,
      look(admin),
      noGrants,
      info,
      beforeWrite(`${admin}\n`),
      {
        match: renameOf(DAEMON_JSON),
        sudo: true,
        check: (_c, opts) => {
          expect(opts.mutates).toBe(true);
          expect(JSON.parse(String(opts.stdin))).toEqual({
            "userland-proxy": false,
            "log-driver": "json-file",
            "log-opts": { "max-size": "10m", "max-file": "3" },
          });
        },
      },
      { match: /systemctl restart docker\.service$/, sudo: true },
      info,
      noGrants,
      {
        ...recorded,
        // Only what vm-install wrote: the admin's userland-proxy is not vm-install's to take back.
        check: (_c, o) => expect(JSON.parse(String(o.stdin)).docker).toEqual({ daemon_json: JSON.parse(ROTATED) }),
      },
      look(
        JSON.stringify({
          "userland-proxy": false,
          "log-driver": "json-file",
          "log-opts": { "max-size": "10m", "max-file": "3" },
        }),
      ),
      noGrants,
      info,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(LINES);
  });

  it("a file dockerd refuses: put back, dockerd restarted on it, the job fails with dockerd's words", async () => {
    const { error, remote } = await run({ ...event, daemon_config: { "no-such-option": true } }, [
      os,
      look(ROTATED),
      info,
      beforeWrite(`${ROTATED}\n`),
      { match: renameOf(DAEMON_JSON), sudo: true },
      { match: /systemctl restart docker\.service$/, sudo: true, code: 1, stderr: "Job for docker.service failed." },
      {
        match: `journalctl -u docker.service --after-cursor='${CURSOR}'`,
        sudo: true,
        stdout:
          "Dec 05 02:10:00 vm dockerd[812]: unable to configure the Docker daemon with file /etc/docker/daemon.json: " +
          "the following directives don't match any configuration option: no-such-option\n",
      },
      {
        match: renameOf(DAEMON_JSON),
        sudo: true,
        // Byte for byte what was there (the trailing newline too), not a re-serialisation.
        check: (_c, opts) => expect(opts.stdin).toBe(`${ROTATED}\n`),
      },
      { match: /systemctl restart docker\.service$/, sudo: true },
      info,
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /dockerd did not accept \/etc\/docker\/daemon\.json with no-such-option set as asked; dockerd said:\nunable to configure the Docker daemon .*: no-such-option\nRolled back: \/etc\/docker\/daemon\.json put back as it was and docker\.service restarted on it, serving\./,
    );
  });

  const MIRROR = "http://10.200.1.1:5000";
  /** dockerd's running state as the reload looks read it (docker info's template, by daemon.json names). */
  const state = (mirrors: string[] | null, labels: string[] | null = null) =>
    JSON.stringify({ debug: false, labels, "live-restore": false, "registry-mirrors": mirrors });
  type Asked = { registry_mirrors?: string[]; daemon_config?: object };
  const reloadSteps = (
    after: { running: string; journal: string },
    set: Asked = { registry_mirrors: [MIRROR] },
  ): Step[] => [
    os,
    look(ROTATED),
    info,
    {
      match: "journalctl -u docker.service -n 1 -o export --no-pager",
      sudo: true,
      facts: {
        "daemon_json.root": `${ROTATED}\n`,
        "docker.journal_cursor": `${CURSOR}\n`,
        "docker.running": `${state(null)}\n`,
      },
    },
    {
      match: renameOf(DAEMON_JSON),
      sudo: true,
      check: (_c, opts) => expect(JSON.parse(String(opts.stdin))).toMatchObject(setAsFile(set)),
    },
    { match: /^systemctl reload docker\.service$/, sudo: true },
    {
      match: "printf '%s ' docker.running; { (before=",
      sudo: true,
      check: (c) => {
        expect(c).toContain(`--after-cursor='${CURSOR}'`);
        // The state before, as $(docker info ...) reads it (no line break): else it "moves" at once.
        expect(c).toContain(`before='${state(null)}';`);
      },
      facts: { "docker.running": after.running, "docker.journal": after.journal },
    },
  ];
  const setAsFile = (set: Asked) => ({
    ...(set.registry_mirrors ? { "registry-mirrors": set.registry_mirrors } : {}),
    ...set.daemon_config,
  });
  const REFUSED =
    'Dec 05 02:10:00 vm dockerd[812]: time="x" level=error msg="unable to configure the Docker daemon with ' +
    'file /etc/docker/daemon.json: invalid mirror"\n';

  it("only registry-mirrors changed: a reload, taken as dockerd's running state shows it; no restart", async () => {
    const { result, remote, error } = await run({ ...event, registry_mirrors: [MIRROR] }, [
      ...reloadSteps({ running: state([`${MIRROR}/`]), journal: "" }),
      noGrants,
      recorded,
      look(JSON.stringify({ ...JSON.parse(ROTATED), "registry-mirrors": [MIRROR] })),
      info,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.map((c) => c.command).filter((c) => /systemctl restart/.test(c))).toEqual([]);
    expect(result?.changes).toEqual([
      `${DAEMON_JSON}: registry-mirrors (unset) -> ["${MIRROR}"]`,
      "reloaded docker.service (registry-mirrors: applied without a restart)",
    ]);
  });

  it("a value that reads like a log level in dockerd's 'Reloaded configuration' dump: accepted, as the state shows", async () => {
    const labels = ["note=level=error", 'x=level=fatal msg="b"'];
    const dump =
      'Dec 05 02:10:00 vm dockerd[812]: time="x" level=info msg="Reloaded configuration: {\\"labels\\":' +
      `[\\"note=level=error\\"],${'\\"mtu\\":1500,'.repeat(200)}}"\n`;
    const set = { daemon_config: { labels } };
    const { result, remote, error } = await run({ ...event, ...set }, [
      ...reloadSteps({ running: state(null, [...labels].reverse()), journal: dump }, set),
      noGrants,
      recorded,
      look(JSON.stringify({ ...JSON.parse(ROTATED), labels })),
      info,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result?.changes.at(-1)).toBe("reloaded docker.service (labels: applied without a restart)");
  });

  it("a reload dockerd refuses: the file put back byte for byte, no restart, the job fails with dockerd's line", async () => {
    const { error, remote } = await run({ ...event, registry_mirrors: [MIRROR] }, [
      ...reloadSteps({ running: state(null), journal: REFUSED }),
      {
        match: renameOf(DAEMON_JSON),
        sudo: true,
        check: (_c, o) => expect(o.stdin).toBe(`${ROTATED}\n`),
      },
      info,
    ]);
    expect(remote.done).toBe(true);
    expect(remote.calls.map((c) => c.command).filter((c) => /systemctl restart/.test(c))).toEqual([]);
    expect(error?.message).toMatch(
      /with registry-mirrors set as asked; dockerd said:\n.*level=error msg="unable to configure .*invalid mirror"\n/,
    );
    expect(error?.message).toMatch(/put back as it was and dockerd kept running on it \(not restarted\), serving\./);
  });

  it("a reload whose values never show, dockerd silent: refused, saying what did not take, no dump", async () => {
    const dump = `Dec 05 02:10:00 vm dockerd[812]: time="x" level=info msg="Reloaded configuration: {${"x".repeat(5000)}}"\n`;
    const { error, remote } = await run({ ...event, registry_mirrors: [MIRROR] }, [
      ...reloadSteps({ running: state(null), journal: dump }),
      { match: renameOf(DAEMON_JSON), sudo: true },
      info,
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      "dockerd said:\ndockerd's running configuration did not take registry-mirrors from /etc/docker/daemon.json within 20 s",
    );
    expect(error?.message).not.toMatch(/Reloaded configuration/);
  });

  it("a daemon.json that is not JSON stops the job before any change", async () => {
    const { error, remote } = await run(event, [os, look("{ broken")]);
    expect(error?.message).toMatch(
      /\/etc\/docker\/daemon\.json on the VM is not a JSON object dockerd can read .*Nothing was changed\./,
    );
    expect(remote.calls.filter((c) => c.opts.mutates)).toEqual([]);
  });
});
