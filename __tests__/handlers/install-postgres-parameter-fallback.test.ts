// What a check foresees in effect for a parameter vm-install takes back (parameter-fallback.ts): the last line
// of the other files, else the built-in default, in SHOW's words; a source above the files keeps its value;
// where the words could be wrong (the server's own forms, a computed default) it says it is not sure.
import { inEffectWithout } from "../../handlers/install-postgres/parameter-fallback";
import type { ParameterFact } from "../../handlers/install-postgres/parameters";

const DROPIN = "/etc/postgresql/15/main/conf.d/90-vm-install.conf";
const CONF = "/etc/postgresql/15/main/postgresql.conf";
const AUTO = "/var/lib/postgresql/15/main/postgresql.auto.conf";

/** work_mem as pg_settings has it, run from vm-install's line '64MB' unless told otherwise. */
const workMem = (over: Partial<ParameterFact> = {}): ParameterFact => ({
  name: "work_mem",
  value: "64MB",
  context: "user",
  pending_restart: false,
  sourcefile: DROPIN,
  source: "configuration file",
  vartype: "integer",
  unit: "kB",
  min_val: "64",
  max_val: "2147483647",
  boot_val: "4096",
  lines: [{ setting: "64MB", file: DROPIN }],
  ...over,
});

describe("what is in effect once vm-install's line is gone", () => {
  it("no other line: the built-in default, in SHOW's words", () => {
    expect(inEffectWithout("work_mem", workMem(), DROPIN)).toEqual({
      value: "4MB",
      sourcefile: null,
      source: "default",
    });
  });

  it("the last other line read, whichever file and in whatever form it is written", () => {
    const lines = [
      { setting: "2MB", file: CONF },
      { setting: "1MB", file: `${CONF}.d/10-admin.conf` },
      { setting: "64MB", file: DROPIN },
    ];
    expect(
      inEffectWithout("work_mem", workMem({ lines: [{ setting: "8192 kB", file: CONF }, lines[2]] }), DROPIN),
    ).toEqual({ value: "8MB", sourcefile: CONF, source: "configuration file" });
    expect(inEffectWithout("work_mem", workMem({ lines }), DROPIN)).toMatchObject({
      value: "1MB",
      sourcefile: `${CONF}.d/10-admin.conf`,
    });
  });

  it("a line read after the drop-in (ALTER SYSTEM) or a source above the files: as it is now", () => {
    const auto = workMem({ value: "32MB", sourcefile: AUTO, lines: [{ setting: "32MB", file: AUTO }] });
    expect(inEffectWithout("work_mem", auto, DROPIN)).toEqual({
      value: "32MB",
      sourcefile: AUTO,
      source: "configuration file",
    });
    const user = workMem({ value: "16MB", sourcefile: null, source: "user" });
    expect(inEffectWithout("work_mem", user, DROPIN)).toEqual({ value: "16MB", sourcefile: null, source: "user" });
  });

  it("a postmaster parameter waiting for a restart: the other files' word, not the value it runs with", () => {
    const fact = workMem({
      name: "shared_buffers",
      context: "postmaster",
      value: "256MB",
      unit: "8kB",
      boot_val: "1024",
      min_val: "16",
      max_val: "1073741823",
      pending_restart: true,
      lines: [
        { setting: "128MB", file: CONF },
        { setting: "512MB", file: DROPIN },
      ],
    });
    expect(inEffectWithout("shared_buffers", fact, DROPIN)).toMatchObject({ value: "128MB", sourcefile: CONF });
  });

  it("not sure: words of the server's own, a default set at start, a line it may refuse, no file read", () => {
    const dateStyle = workMem({
      name: "DateStyle",
      vartype: "string",
      unit: null,
      value: "ISO, MDY",
      lines: [{ setting: "iso, mdy", file: DROPIN }],
    });
    expect(inEffectWithout("datestyle", dateStyle, DROPIN)).toEqual({
      unsure: "the server shows datestyle as 'ISO, MDY', not as written",
    });
    const port = workMem({ name: "port", unit: null, value: "5433", lines: [{ setting: "5433", file: DROPIN }] });
    expect(inEffectWithout("port", port, DROPIN)).toEqual({ unsure: "its default is set when the server starts" });
    const bad = workMem({ lines: [{ setting: "lots", file: CONF }, ...(workMem().lines ?? [])] });
    expect(inEffectWithout("work_mem", bad, DROPIN)).toEqual({
      unsure: `${CONF} sets it to 'lots', which may not apply`,
    });
    expect(inEffectWithout("work_mem", workMem({ lines: undefined }), DROPIN)).toEqual({
      unsure: "the configuration files were not read",
    });
  });

  it("a name the server does not know (a module's, its library gone): no value", () => {
    expect(inEffectWithout("pg_x.y", undefined, DROPIN)).toBeUndefined();
  });
});
