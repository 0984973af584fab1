// The declaration engine on a fixture of its own: groups and lists of settings are checked as written,
// the rules beside them report under their key paths, and resolving fills defaults in, key by key.
import {
  configFields,
  describeSetting,
  group,
  resolveSettings,
  ruleProblems,
  type SettingsRule,
  setting,
} from "../../lib/shared/settings";
import { boolean, integer, object, string, ValidationError, validate } from "../../lib/shared/validate";

const ITEM_RULES: readonly SettingsRule[] = [
  { doc: "big needs size", check: (item) => (item.big && item.size === undefined ? ["size: required when big"] : []) },
];
const FIXTURE = {
  title: setting(string(), { default: "t", doc: "A title." }),
  shared: setting(object({}), { mergedInto: "items[].x", defaultDoc: "none", doc: "Read into each item." }),
  inner: group({ depth: setting(integer(1, 9), { default: 3, doc: "Depth." }) }, { default: {}, doc: "Inner." }),
  given: group({ n: setting(integer(1, 9), { default: 5, doc: "N." }) }, { asGiven: true, doc: "As given." }),
  items: group(
    {
      id: setting(string(), { required: true, doc: "Id." }),
      big: setting(boolean(), { default: false, doc: "Big." }),
      size: setting(integer(1, 9), { doc: "Size." }),
      label: setting(string(), {
        defaultDoc: "<title>-<id>",
        doc: "Label.",
        resolve: (value: string | undefined, item, root) => value ?? `${root.title ?? "t"}-${item.id}`,
      }),
    },
    { list: true, minItems: 1, required: true, rules: ITEM_RULES, doc: "Items." },
  ),
};
const check = (raw: unknown) => validate(object<Record<string, unknown>>(configFields(FIXTURE)), raw, "fixture");

describe("settings declared in groups and lists", () => {
  it("checks values as written: required keys, unknown keys, inner paths", () => {
    expect(() => check({ items: [{ id: "a", size: 0 }], inner: { depht: 1 } })).toThrow(ValidationError);
    try {
      check({ items: [{ id: "a", size: 0 }], inner: { depht: 1 } });
    } catch (err) {
      expect((err as ValidationError).problems).toEqual([
        'inner.depht: unknown key; did you mean "depth"? allowed here: depth',
        "items[0].size: expected a whole number from 1 to 9, got number 0",
      ]);
    }
    expect(() => check({})).toThrow(/items: required key is missing/);
  });

  it("reports a rule's problems under the path of the group it is declared beside", () => {
    const given = check({ items: [{ id: "a" }, { id: "b", big: true }] });
    expect(ruleProblems(FIXTURE, [], given)).toEqual(["items[1].size: required when big"]);
  });

  it("resolves defaults key by key: groups, lists, resolve, kept as given, merged-into keys dropped", () => {
    const given = check({ title: "x", shared: {}, given: {}, items: [{ id: "a" }, { id: "b", label: "own" }] });
    expect(resolveSettings(FIXTURE, given)).toEqual({
      title: "x",
      inner: { depth: 3 },
      given: {},
      items: [
        { id: "a", big: false, label: "x-a" },
        { id: "b", big: false, label: "own" },
      ],
    });
  });

  it("describes each setting with its default, or says it is required", () => {
    expect(describeSetting(FIXTURE.title)).toBe('A title. Default: "t".');
    expect(describeSetting(FIXTURE.items.settings.id)).toBe("Id. Required.");
    expect(describeSetting(FIXTURE.items.settings.label)).toBe("Label. Default: <title>-<id>.");
    expect(describeSetting(FIXTURE.items.settings.size)).toBe("Size. Default: none.");
  });
});
