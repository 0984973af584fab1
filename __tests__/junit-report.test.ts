// The JUnit reports of npm run check / npm run status (lib/operator/reports): valid against the schema Jenkins and
// GitLab read (validated by xmllint, which bin/setup installs: under CI=true a missing xmllint fails here),
// one case per VM x installer with the outcome the exit code implies, text escaped, secrets never written,
// the file written whole with mode 0644.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseConfig } from "../lib/construct/config/parse";
import type { DriftRow } from "../lib/operator/check/run-checks";
import { BadUsage } from "../lib/operator/exit-codes";
import { renderJunit, writeReportFile, xmlText } from "../lib/operator/reports/junit";
import { parseReportArgs, reportUsage } from "../lib/operator/reports/report-args";
import { driftCases, reportSecrets, statusCases } from "../lib/operator/reports/report-cases";
import type { StatusRow } from "../lib/operator/status/status-rows";
import { context, tempDir } from "./support/synth";
import { HOSTILE, NOT_ONE_PRINTABLE_LINE } from "./support/vm-says";

const DASH = 'one starting with "-" goes as --junit=VALUE';

const XSD = path.join(__dirname, "fixtures", "junit", "jenkins-junit.xsd");
const WHEN = "2026-12-04T02:00:00.000Z";
const haveXmllint = spawnSync("xmllint", ["--version"]).status === 0;

/** xmllint's verdict on `xml` against the schema: "" when valid, else its complaints. */
function schemaProblems(xml: string): string {
  const dir = tempDir("junit-xsd-");
  const file = path.join(dir, "report.xml");
  fs.writeFileSync(file, xml);
  const run = spawnSync("xmllint", ["--noout", "--schema", XSD, file], { encoding: "utf8" });
  if (run.error) throw new Error(`xmllint could not run (${run.error.message}): bash bin/setup installs libxml2-utils`);
  return run.status === 0 ? "" : `${run.stderr}${run.stdout}`;
}

const drift = (over: Partial<DriftRow>): DriftRow => ({
  vm: "web-1",
  installer: "install-packages",
  state: "in sync",
  wouldChange: [],
  summary: "nothing to do",
  warnings: [],
  durationMs: 1234,
  ...over,
});
const STATUS_OK: StatusRow = { vm: "web-1", installer: "install-packages", status: "ok", summary: "ok" };
const status = (over: Partial<StatusRow>): StatusRow => ({ ...STATUS_OK, ...over });

const DISABLED = "disabled in cdktf.json";
const NO_SUCH_PKG = "install-packages failed: no-such-pkg";
const CONTROL_TEXT = "bell\u0007 escape\u001b[0m nul\u0000 tab\t cr\r";
const CASES: Record<string, { check: DriftRow[]; status: StatusRow[] }> = {
  "all ok": {
    check: [drift({}), drift({ vm: "db", installer: "install-postgres", handlerMs: 900, durationMs: undefined })],
    status: [status({ durationMs: 2345, lastRun: WHEN }), status({ vm: "db" })],
  },
  drift: {
    check: [drift({ state: "drift", wouldChange: ["install jq", "upgrade curl 7 -> 8"], summary: "2 would change" })],
    status: [status({ status: "partial", summary: "1 of 2 packages failed" })],
  },
  "failed installer": {
    check: [drift({ state: "error", summary: "ssh: connection refused" })],
    status: [status({ status: "failed", summary: NO_SUCH_PKG }), status({ status: "not run", summary: "" })],
  },
  skipped: {
    check: [drift({ installer: "install-docker", state: "skipped", summary: DISABLED, durationMs: undefined })],
    status: [status({ installer: "install-docker", status: "skipped", summary: DISABLED })],
  },
  "XML-special and control characters": {
    check: [
      drift({
        vm: "a<b>&\"c'",
        state: "drift",
        wouldChange: ['write ]]> <!-- & "x"', CONTROL_TEXT, "lone \ud800 surrogate 😀"],
      }),
    ],
    status: [status({ status: "failed", summary: "<failure>&amp;\u0001\u000b\u000c\ufffe" })],
  },
};

describe("JUnit reports validate against the Jenkins/GitLab JUnit schema", () => {
  test("xmllint is installed (bin/setup installs libxml2-utils): required under CI", () => {
    if (process.env.CI === "true") expect(haveXmllint).toBe(true);
  });
  // Skipped only outside CI: there a missing xmllint fails every case, not just the one above.
  const validate = haveXmllint || process.env.CI === "true" ? test : test.skip;
  validate("the validation itself rejects what CI would: a suite without its counts, a raw control character", () => {
    expect(schemaProblems('<testsuites><testsuite name="x"/></testsuites>')).toMatch(/tests.*required/);
    expect(schemaProblems('<testsuites name="a\u0001b"/>')).not.toBe("");
  });
  for (const [name, rows] of Object.entries(CASES)) {
    validate(`${name}: check and status reports are valid`, () => {
      const check = renderJunit({ title: "vm-install check", cases: driftCases(rows.check), timestamp: WHEN });
      const stat = renderJunit({ title: "vm-install status", cases: statusCases(rows.status), timestamp: WHEN });
      expect(schemaProblems(check)).toBe("");
      expect(schemaProblems(stat)).toBe("");
    });
  }
});

describe("JUnit report contents", () => {
  test("one suite per VM, a case per VM x installer: drift a failure with would_change, errors, skips, times", () => {
    const rows = ["all ok", "drift", "skipped", "failed installer"].flatMap((name) => CASES[name].check);
    const xml = renderJunit({ title: "vm-install check", cases: driftCases(rows), timestamp: WHEN });
    expect(xml).toContain('<testsuites name="vm-install check" tests="5" failures="1" errors="1" time="4.602">');
    const web1 = `<testsuite name="web-1" tests="4" failures="1" errors="1" skipped="1" time="3.702"`;
    expect(xml).toContain(`${web1} timestamp="${WHEN}">`);
    expect(xml).toContain('<testsuite name="db" tests="1" failures="0" errors="0" skipped="0" time="0.900"');
    expect(xml).toContain('<testcase classname="db" name="install-postgres" time="0.900">');
    const failure = '<failure type="drift" message="install jq; upgrade curl 7 -&gt; 8">';
    expect(xml).toContain(`${failure}install jq\nupgrade curl 7 -&gt; 8</failure>`);
    expect(xml).toContain('<error type="check error" message="ssh: connection refused"/>');
    expect(xml).toContain('<testcase classname="web-1" name="install-docker">\n      <skipped type="disabled"');
  });

  test("status: failed, partial and not run are failures with the job's message; skipped is skipped", () => {
    const rows = [...CASES.drift.status, ...CASES["failed installer"].status, ...CASES.skipped.status];
    const xml = renderJunit({ title: "vm-install status", cases: statusCases(rows), timestamp: WHEN });
    expect(xml).toContain('<failure type="partial" message="1 of 2 packages failed"/>');
    expect(xml).toContain('<failure type="failed" message="install-packages failed: no-such-pkg"/>');
    expect(xml).toContain('<failure type="not run" message="the installer has not run on this VM"/>');
    expect(xml).toContain('<skipped type="disabled" message="disabled in cdktf.json"/>');
    expect(xml).toContain('failures="3" errors="0"');
  });

  test("every character XML 1.0 cannot carry is replaced, every special one escaped", () => {
    const text = xmlText("a\u0000b\u0008c\u000bd\u001fe\ufffef\ud800g\udc00h 😀 <&>\"' \t\r\n");
    expect(text).toBe("a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\ufffdg\ufffdh 😀 &lt;&amp;&gt;&quot;&apos; &#9;&#13;\n");
    const cases = driftCases(CASES["XML-special and control characters"].check);
    const xml = renderJunit({ title: "t", cases, timestamp: WHEN });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting none is left
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    expect(xml).toContain('classname="a&lt;b&gt;&amp;&quot;c&apos;"');
  });
});

// A row's texts come from job messages: the VM's word, or a forged record in the state. The report is still
// valid, each attribute one line, each item of system-out and of a drift's detail one line of its own.
describe("what the VM says is data in the JUnit report, not layout", () => {
  const check = driftCases([
    drift({ vm: HOSTILE, state: "drift", wouldChange: [HOSTILE, HOSTILE], summary: HOSTILE, warnings: [HOSTILE] }),
    drift({ installer: HOSTILE, state: "error", summary: HOSTILE, warnings: [HOSTILE, HOSTILE], log: HOSTILE }),
  ]);
  const stat = statusCases([
    status({ summary: HOSTILE, lastRun: HOSTILE, hostKey: HOSTILE, log: HOSTILE }),
    status({ vm: HOSTILE, status: "failed", summary: HOSTILE, hostKey: HOSTILE }),
  ]);
  const reports = [check, stat].map((cases) => renderJunit({ title: HOSTILE, cases, timestamp: WHEN }));
  const inner = (xml: string, element: string) =>
    [...xml.matchAll(new RegExp(`<${element}[^>]*>([^<]*)</${element}>`, "g"))].map((m) => m[1].split("\n").length);

  const validate = haveXmllint || process.env.CI === "true" ? test : test.skip;
  validate("valid against the schema", () => {
    for (const xml of reports) expect(schemaProblems(xml)).toBe("");
  });

  test("no control, escape, bidi or separator; attributes one line; a line per item in system-out and detail", () => {
    for (const xml of reports) {
      for (const line of xml.split("\n")) expect(line).not.toMatch(NOT_ONE_PRINTABLE_LINE);
      for (const [, value] of xml.matchAll(/="([^"]*)"/g)) expect(value).not.toMatch(/&#(9|10|13);/);
    }
    expect(inner(reports[0], "failure")).toEqual([2]);
    expect(inner(reports[0], "system-out")).toEqual([2, 3]);
    expect(inner(reports[1], "system-out")).toEqual([4, 1]);
  });
});

describe("JUnit reports never carry a secret", () => {
  const dir = tempDir("junit-secrets-");
  const keyBody = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
  const key = `-----BEGIN OPENSSH PRIVATE KEY-----\n${keyBody}\n-----END OPENSSH PRIVATE KEY-----\n`;
  fs.writeFileSync(path.join(dir, "id_test"), key, { mode: 0o600 });
  const config = parseConfig(
    context({
      vms: [{ name: "db", kind: "existing", address: "10.0.0.6", privateKeyPath: "id_test" }],
      installers: { postgres: { enabled: true, passwordVariable: "pg_pw" } },
    }),
  );
  const password = "s3cret-Pa55word-xyz";
  const env = { TF_VAR_pg_pw: password, TF_VAR_sless_token: "eyJhbGciOiJIUzI1NiJ9.sless-token-value" };
  const secrets = reportSecrets(config, env, (p) => path.resolve(dir, p));
  const keyLine = key.split("\n")[1];

  test("the PostgreSQL password, the sless token and the SSH key are known, and scrubbed from every field", () => {
    expect(secrets).toEqual(expect.arrayContaining([password, key, env.TF_VAR_sless_token]));
    const leaky = `failed: psql -W ${password} token ${env.TF_VAR_sless_token} key ${keyLine}`;
    const leakyRow = drift({ vm: "db", state: "drift", wouldChange: [leaky], summary: leaky, warnings: [leaky] });
    const check = driftCases([leakyRow]);
    const stat = statusCases([status({ vm: "db", status: "failed", summary: leaky, hostKey: leaky, log: leaky })]);
    for (const cases of [check, stat]) {
      const xml = renderJunit({ title: "t", cases, timestamp: WHEN, secrets });
      expect(xml).not.toContain(password);
      expect(xml).not.toContain(env.TF_VAR_sless_token);
      expect(xml).not.toContain(keyLine);
      expect(xml).toContain("failed: psql -W");
    }
  });
});

const WHAT_TO_DO = "give a path in a folder that exists and you may write to";

describe("the report file", () => {
  test("written whole (no temporary file left) with mode 0644, replacing an older one", () => {
    const dir = tempDir("junit-file-");
    const file = path.join(dir, "report.xml");
    fs.writeFileSync(file, "old", { mode: 0o600 });
    const mask = process.umask(0o077);
    try {
      writeReportFile(file, "<testsuites/>\n");
    } finally {
      process.umask(mask);
    }
    expect(fs.readFileSync(file, "utf8")).toBe("<testsuites/>\n");
    expect(fs.statSync(file).mode & 0o777).toBe(0o644);
    expect(fs.readdirSync(dir)).toEqual(["report.xml"]);
  });

  test("an unwritable path says which and what to do, leaving nothing behind", () => {
    const dir = tempDir("junit-file-");
    expect(() => writeReportFile(path.join(dir, "no-such-folder", "r.xml"), "x")).toThrow(
      `cannot write the JUnit report to ${path.join(dir, "no-such-folder", "r.xml")} (ENOENT): ${WHAT_TO_DO}`,
    );
    expect(() => writeReportFile(dir, "x")).toThrow(/cannot write the JUnit report to .* \(EISDIR\)/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe("check and status arguments", () => {
  test("--junit FILE and --junit=FILE, with --json or without; a missing path or an unknown argument is said", () => {
    expect(reportUsage("check")).toBe("usage: npm run check [-- [--json] [--junit FILE]]");
    expect(parseReportArgs([])).toEqual({ json: false });
    expect(parseReportArgs(["--junit", "r.xml", "--json"])).toEqual({ json: true, junit: "r.xml" });
    expect(parseReportArgs(["--junit=out/r.xml"])).toEqual({ json: false, junit: "out/r.xml" });
    expect(() => parseReportArgs(["--junit"])).toThrow(new BadUsage(`--junit needs a value (FILE); ${DASH}`));
    expect(() => parseReportArgs(["--junit", "--json"])).toThrow(new BadUsage(`--junit needs a value (FILE); ${DASH}`));
    expect(() => parseReportArgs(["--json=yes"])).toThrow(new BadUsage("--json takes no value"));
    expect(() => parseReportArgs(["--xml"])).toThrow(new BadUsage("unknown option --xml"));
    expect(() => parseReportArgs(["report.xml"])).toThrow(new BadUsage("unexpected report.xml"));
  });
});
