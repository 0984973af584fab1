// An unknown key in cdktf.json names the allowed key it most likely meant, at every level of the
// configuration and in a job's event (the same validator), and names none when nothing is close.
import { configSchema } from "../lib/construct/config/parse";
import { editDistance, nearestName } from "../lib/shared/nearest-name";
import { configProblems, context } from "./support/synth";

/** Every object of the configuration's schema with its allowed keys, by a path like "vms[].installers.postgres". */
function objectsOf(schema: any, path = "(top level)"): { path: string; keys: string[] }[] {
  if (schema?.type === "array") return objectsOf(schema.items, `${path}[]`);
  if (!schema?.properties) return [];
  const keys = Object.keys(schema.properties);
  return [
    { path, keys },
    ...keys.flatMap((k) => objectsOf(schema.properties[k], path === "(top level)" ? k : `${path}.${k}`)),
  ];
}

/** The slips a hand makes: a letter dropped, doubled, swapped with its neighbour, the case of one changed. */
function slips(key: string): string[] {
  const i = Math.floor(key.length / 2);
  return [
    key.slice(0, -1),
    key + key.at(-1),
    key.slice(0, i - 1) + key[i] + key[i - 1] + key.slice(i + 1),
    key.slice(0, i) +
      (key[i] === key[i].toUpperCase() ? key[i].toLowerCase() : key[i].toUpperCase()) +
      key.slice(i + 1),
  ].filter((s) => s !== key);
}

describe("unknown keys in cdktf.json", () => {
  test("the issue's typo: installers.postgres.allowedCidr names allowedCidrs", () => {
    const p = configProblems(context({ installers: { postgres: { enabled: true, allowedCidr: ["10.0.0.0/8"] } } }));
    expect(p).toContainEqual(
      expect.stringMatching(
        /^installers\.postgres\.allowedCidr: unknown key; did you mean "allowedCidrs"\? allowed here: .*allowedCidrs/,
      ),
    );
  });

  test("at the top, in a VM and in a list item: the nearest name, then every allowed one", () => {
    const p = configProblems(context({ stackname: "x", vms: [{ name: "vm1", cpus: 4, installers: { dockr: {} } }] }));
    expect(p).toContainEqual(
      expect.stringMatching(/^stackname: unknown key; did you mean "stackName"\? allowed here: stackName, runId/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^vms\[0\]\.cpus: unknown key; did you mean "cpu"\? allowed here: name, kind/),
    );
    expect(p).toContainEqual(
      expect.stringMatching(/^vms\[0\]\.installers\.dockr: unknown key; did you mean "docker"\?/),
    );
  });

  test("a key like none of the allowed ones names none", () => {
    const topKeys = "stackName, runId, parallelism, jobTarget, backend, nubes, sless, installers, vms, rollout";
    expect(configProblems(context({ colour: "blue" }))).toContainEqual(`colour: unknown key; allowed here: ${topKeys}`);
  });

  test("the class: every slip of every key of every object of the configuration names that key", () => {
    const objects = objectsOf(configSchema());
    expect(objects.length).toBeGreaterThan(10);
    const wrong: string[] = [];
    for (const { path, keys } of objects) {
      for (const key of keys.filter((k) => k.length >= 4)) {
        for (const slip of slips(key).filter((s) => !keys.includes(s))) {
          const found = nearestName(slip, keys);
          if (found !== key) wrong.push(`${path}: ${slip} -> ${found} (meant ${key})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  test("snake_case for camelCase, and a swap, count as one slip; another word is not a slip", () => {
    expect(nearestName("budget_sec", ["attempts", "delaySec", "budgetSec", "timeoutSec"])).toBe("budgetSec");
    expect(editDistance("depht", "depth")).toBe(1);
    expect(nearestName("colour", ["stackName", "runId", "vms"])).toBeUndefined();
    expect(nearestName("x", ["y"])).toBe("y");
  });
});
