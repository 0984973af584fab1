// The twin's protocol pieces without Terraform: cty's msgpack with unknowns, the shared planning rules,
// and the handshake refusing a process Terraform did not start.

import { decodeValue, encodeValue, UNKNOWN } from "../../dev/twin/protocol/cty-value";
import { planChange } from "../../dev/twin/protocol/planning";
import { handshakeProblem, MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE } from "../../dev/twin/protocol/plugin-server";
import type { ResourceImplementation } from "../../dev/twin/protocol/resource";
import { loadProviderSchema } from "../../dev/twin/protocol/schema";

describe("cty values in msgpack", () => {
  test("an unknown is cty's extension 0 (fixext1), and comes back as UNKNOWN", () => {
    const bytes = encodeValue({ id: UNKNOWN, n: 2, m: { a: "b" }, z: null });
    expect(Buffer.from(bytes).includes(Buffer.from([0xd4, 0x00, 0x00]))).toBe(true);
    expect(decodeValue(bytes)).toEqual({ id: UNKNOWN, n: 2, m: { a: "b" }, z: null });
  });

  test("a refined unknown (extension 12, Terraform 1.6+) reads as unknown", () => {
    // fixmap(1) "x" -> ext8 type 12 with a 1-byte payload
    expect(decodeValue(Uint8Array.from([0x81, 0xa1, 0x78, 0xc7, 0x01, 0x0c, 0x80]))).toEqual({ x: UNKNOWN });
  });

  test("no bytes is null (Terraform's way of saying no object)", () => {
    expect(decodeValue(new Uint8Array())).toBeNull();
    expect(decodeValue(encodeValue(null))).toBeNull();
  });
});

describe("planning rules", () => {
  const block = loadProviderSchema("sless").resource_schemas.sless_job.block;
  const impl: ResourceImplementation = {
    replaceOn: ["run_id", "source_dir", "event_json"],
    create: async (p) => p,
    delete: async () => undefined,
  };
  const config = {
    name: "j",
    runtime: "nodejs20",
    entrypoint: "handler.install",
    source_dir: "/d",
    env_vars: null,
    event_json: "{}",
    run_id: 1,
    wait_timeout_sec: 60,
    id: null,
    phase: null,
    message: null,
  };

  test("create: computed attributes are unknown until apply", () => {
    const plan = planChange(block, impl, null, config, config);
    expect(plan.planned).toMatchObject({ id: UNKNOWN, phase: UNKNOWN, message: UNKNOWN, run_id: 1 });
    expect(plan.requiresReplace).toEqual([]);
  });

  test("a changed run_id replaces; an unchanged job plans no replacement", () => {
    const prior = { ...config, id: "j-1", phase: "Succeeded", message: "{}" };
    expect(planChange(block, impl, prior, { ...prior }, config).requiresReplace).toEqual([]);
    expect(planChange(block, impl, prior, { ...prior, run_id: 2 }, { ...config, run_id: 2 }).requiresReplace).toEqual([
      "run_id",
    ]);
    // Unknown at plan time (e.g. a new bundle path) counts as a change.
    expect(planChange(block, impl, prior, { ...prior, source_dir: UNKNOWN }, config).requiresReplace).toEqual([
      "source_dir",
    ]);
  });

  test("destroy plans null", () => {
    expect(planChange(block, impl, { ...config }, null, null).planned).toBeNull();
  });
});

describe("plugin handshake", () => {
  test("without Terraform's magic cookie the provider refuses to start, saying what it is", () => {
    expect(handshakeProblem({})).toMatch(/Terraform provider plugin: Terraform starts it/);
  });

  test("a Terraform offering only protocol 5 is told this provider speaks 6", () => {
    expect(handshakeProblem({ [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: "5" })).toMatch(
      /speaks only 6/,
    );
    expect(
      handshakeProblem({ [MAGIC_COOKIE_KEY]: MAGIC_COOKIE_VALUE, PLUGIN_PROTOCOL_VERSIONS: "5,6" }),
    ).toBeUndefined();
  });
});
