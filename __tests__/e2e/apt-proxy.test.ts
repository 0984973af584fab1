// End-to-end: a VM behind a proxy. One host-only sandbox (it reaches its host side and nothing beyond) with
// Debian's apt-cacher-ng on that host side as its only way to the mirror. Without aptProxy the job fails
// naming the mirror it could not reach and leaves dpkg as it was; with it every installer succeeds through
// the proxy (its log shows the VM's requests), check mode foresees the proxy file, and removing the
// setting removes the file. The cases run in order on the one VM: each builds on the state the last left.

import { readHostAptSources } from "../../dev/sandbox/hostapt";
import type { Sandbox } from "../../dev/sandbox/index";
import { startSandbox } from "../../dev/sandbox/index";
import { type AptCacher, startAptCacher } from "./support/apt-cacher";
import { describeE2E, expectSucceeded, root, runInstaller } from "./support/e2e";
import { FACTS } from "./support/release";

const T = 600_000;
const FILE = "/etc/apt/apt.conf.d/90vm-install-proxy";
const PW = "Proxy-pw 'quoted' $HOME";

/** The hosts of the host's mirror, as the sandbox image was built from them: what apt on the VM asks for. */
const MIRROR_HOSTS = [...new Set(readHostAptSources().flatMap((s) => s.uris.map((u) => new URL(u).hostname)))];

/** dpkg's database and whether anything holds its locks (a dpkg --configure -a that can take them). */
async function dpkgState(sb: Sandbox): Promise<{ status: string; audit: string; lock: string }> {
  const status = await root(sb, "sha256sum /var/lib/dpkg/status");
  const audit = await root(sb, "dpkg --audit; true");
  const lock = (await sb.rootExec("dpkg --configure -a 2>&1; echo rc=$?")).stdout.trim();
  return { status, audit, lock };
}

const fileOnVm = async (sb: Sandbox) => (await sb.rootExec(`cat ${FILE}`)).stdout;

describeE2E("a VM behind a proxy: apt only through apt-cacher-ng on the host side", () => {
  let sb: Sandbox;
  let acng: AptCacher;
  let proxyLine: string;
  beforeAll(async () => {
    sb = await startSandbox({ hostOnly: true });
    acng = await startAptCacher(sb.hostAddress);
    proxyLine = `wrote ${FILE} (apt through ${acng.url})`;
  }, T);
  afterAll(async () => {
    await acng?.stop();
    await sb?.stop();
  }, T);

  /** The VM's requests apt-cacher-ng logged ("I" lines carry the client), from this point on. */
  const logMark = () => acng.log().length;
  const requestsSince = (mark: number) =>
    acng
      .log()
      .slice(mark)
      .split("\n")
      .filter((l) => l.split("|")[3] === sb.address);

  test(
    "without aptProxy: the mirror is unreachable, the job fails naming it; dpkg as it was, nothing locked",
    async () => {
      expect(MIRROR_HOSTS.length).toBeGreaterThan(0);
      // The fence itself: no TCP connection from the VM reaches the mirror, while the host side answers.
      const direct = await sb.rootExec(`timeout 20 bash -c 'exec 3<>/dev/tcp/${MIRROR_HOSTS[0]}/80' 2>&1; echo rc=$?`);
      expect(direct.stdout).toMatch(/rc=[1-9]/);
      const before = await dpkgState(sb);
      const run = await runInstaller(sb, "install-packages", { packages: ["jq"] });
      expect(run.phase).toBe("Failed");
      const host = MIRROR_HOSTS.find((h) => run.message.includes(h));
      expect({ named: host ?? `none of ${MIRROR_HOSTS.join(", ")}`, message: run.message }).toMatchObject({
        named: expect.any(String),
      });
      expect(host).toBeDefined();
      expect(run.message).toMatch(/Could not connect|Temporary failure resolving|Unable to connect/);
      expect(await dpkgState(sb)).toEqual(before);
      expect(before.lock).toBe("rc=0");
      expect((await sb.rootExec(`test -e ${FILE}`)).code).not.toBe(0);
    },
    T,
  );

  test(
    "check mode with aptProxy foresees the proxy file and writes nothing",
    async () => {
      const check = await runInstaller(sb, "install-packages", { packages: ["jq"], apt_proxy: acng.url, check: true });
      expectSucceeded(check);
      expect(check.result.would_change).toEqual([proxyLine, "installed jq"]);
      expect((await sb.rootExec(`test -e ${FILE}`)).code).not.toBe(0);
    },
    T,
  );

  test(
    "install-packages through the proxy: the file first, then jq; its .deb came through apt-cacher-ng",
    async () => {
      const mark = logMark();
      const run = await runInstaller(sb, "install-packages", { packages: ["jq"], apt_proxy: acng.url });
      expectSucceeded(run);
      expect(run.result.changes).toEqual([proxyLine, "installed jq"]);
      expect(await fileOnVm(sb)).toContain(`Acquire::http::Proxy "${acng.url}";`);
      expect(await root(sb, `stat -c '%a %U' ${FILE}`)).toBe("644 root\n");
      const seen = requestsSince(mark);
      expect(seen.some((l) => /\/InRelease$/.test(l))).toBe(true);
      expect(seen.some((l) => /\/pool\/.*\/jq_[^/]*\.deb$/.test(l))).toBe(true);
      // Fetched from the host's own mirror: apt-cacher-ng took the URL from apt's request, no Remap of its own.
      expect(seen.every((l) => MIRROR_HOSTS.some((h) => l.split("|")[4]?.startsWith(`${h}/`)))).toBe(true);
    },
    T,
  );

  test(
    "a detached step reads the proxy from the file: its unit had no proxy in its environment, apt.conf had it",
    async () => {
      // The install above ran apt-get as a transient systemd unit; the step's own record says what it had.
      const install = await root(
        sb,
        'for d in /run/vm-install/steps/*/; do grep -q "apt-get.* install " "$d/cmd" && cat "$d/proxy" "$d/rc" && ' +
          'journalctl --no-pager -o cat | grep -c "vm-install step $(basename "$d")"; done; true',
      );
      // Its record: no proxy variable given to the unit, apt's configuration holding the file's; exit 0; and
      // systemd started it as a unit (the journal names the step).
      expect(install).toMatch(
        new RegExp(
          `^without a proxy in its environment; apt\\.conf: Acquire::http::Proxy "${acng.url}"; ` +
            `Acquire::https::Proxy "${acng.url}"; \n0\n[1-9]\\d*\n$`,
        ),
      );
    },
    T,
  );

  test(
    "install-docker (distro, verify daemon) and install-postgres (the distribution's) succeed through it",
    async () => {
      const mark = logMark();
      const docker = await runInstaller(sb, "install-docker", {
        channel: "distro",
        verify: "daemon",
        apt_proxy: acng.url,
      });
      expectSucceeded(docker);
      expect(docker.result.changes).not.toContain(proxyLine); // already as asked: not written again
      const pg = await runInstaller(
        sb,
        "install-postgres",
        { db_name: "shop", db_user: "shop_app", db_password: PW, apt_proxy: acng.url },
        { secrets: [PW] },
      );
      expectSucceeded(pg);
      const debs = requestsSince(mark).filter((l) => /\.deb$/.test(l));
      expect(debs.some((l) => /\/docker\.io_/.test(l))).toBe(true);
      expect(debs.some((l) => /\/postgresql-\d+_/.test(l))).toBe(true);
      expect(await root(sb, `systemctl is-active docker postgresql@${FACTS.pgMajor}-main`)).toMatch(
        /^active\nactive\n$/,
      );
      expect(await root(sb, "dpkg --audit; echo end")).toBe("end\n");
    },
    T,
  );

  test(
    "removing the setting: a check foresees the file's removal, the run removes it and nothing else",
    async () => {
      const removed = `removed ${FILE} (no aptProxy set: apt goes direct)`;
      const check = await runInstaller(sb, "install-packages", { packages: ["jq"], check: true });
      expectSucceeded(check);
      expect(check.result.would_change).toEqual([removed]);
      expect(await fileOnVm(sb)).toContain(acng.url);
      const run = await runInstaller(sb, "install-packages", { packages: ["jq"] });
      expectSucceeded(run);
      expect(run.result.changes).toEqual([removed]);
      expect((await sb.rootExec(`test -e ${FILE}`)).code).not.toBe(0);
      expect(await root(sb, "apt-config dump | grep -ci 'Acquire::http::Proxy' || true")).toBe("0\n");
    },
    T,
  );
});
