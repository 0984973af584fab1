// Issue 32: a pg_hba.conf line the admin copied verbatim, vm-install's marker included, is the admin's. The
// inventory records one line per entry, so vm-install takes back one occurrence (the last: the copy left is
// the one the server already matched first), keeps the copy and names it; a rerun that still grants the entry
// leaves both. Both take-backs: a narrower run (planHba) and state absent (withoutEntries).
import { withoutEntries } from "../../handlers/install-postgres/absent";
import { HBA_MARKER, hbaEntry, hbaLine, planHba } from "../../handlers/install-postgres/pg";

const STOCK = "local   all   postgres   peer\nhost    all   all   127.0.0.1/32   scram-sha-256\n";
const ENTRY = hbaEntry("hostssl", "shop", "app", "10.0.0.0/8");
const OURS = hbaLine("hostssl", "shop", "app", "10.0.0.0/8");
const OTHER = hbaEntry("hostssl", "shop", "app", "192.168.0.0/16");
const ADMIN = "host    all   admin   10.9.0.0/16   scram-sha-256";

/** Our line last (appended), the admin's copy right above it or higher up, above another line of theirs. */
const withCopy = (where: "next" | "higher") =>
  where === "next" ? `${STOCK}${ADMIN}\n${OURS}\n${OURS}\n` : `${STOCK}${OURS}\n${ADMIN}\n${OURS}\n`;
/** The copy with its own spacing: the same fields and marker. */
const SPACED = `hostssl shop app 10.0.0.0/8 scram-sha-256 ${HBA_MARKER}`;

describe("a narrower run (planHba): one occurrence per recorded line", () => {
  it.each([
    ["next", `${STOCK}${ADMIN}\n${OURS}\n`],
    ["higher", `${STOCK}${OURS}\n${ADMIN}\n`],
  ] as const)("the copy %s: the last occurrence taken back, the copy kept where it is and named", (where, after) => {
    const plan = planHba(withCopy(where), [], [ENTRY]);
    expect(plan).toMatchObject({ removed: [ENTRY], copies: [ENTRY], content: after });
  });

  it("the copy spaced its own way: still the copy, the first one stays", () => {
    const plan = planHba(`${STOCK}${SPACED}\n${OURS}\n`, [], [ENTRY]);
    expect(plan).toMatchObject({ removed: [ENTRY], copies: [ENTRY], content: `${STOCK}${SPACED}\n` });
  });

  it("still wanted: nothing is removed (the copy is not a duplicate of vm-install's), the entry stays recorded", () => {
    const text = withCopy("next");
    expect(planHba(text, [ENTRY], [ENTRY])).toMatchObject({
      content: text,
      duplicates: [],
      removed: [],
      owned: [ENTRY],
    });
  });

  it("another entry taken back does not name this copy; without a copy nothing is named", () => {
    const text = `${withCopy("next")}${hbaLine("hostssl", "shop", "app", "192.168.0.0/16")}\n`;
    expect(planHba(text, [ENTRY], [ENTRY, OTHER])).toMatchObject({ removed: [OTHER], copies: [] });
    expect(planHba(`${STOCK}${OURS}\n`, [], [ENTRY])).toMatchObject({ removed: [ENTRY], copies: [] });
  });

  it("no inventory yet (an older version's lines): every marked line is vm-install's, as before", () => {
    expect(planHba(withCopy("next"), [], undefined)).toMatchObject({ removed: [ENTRY, ENTRY], copies: [] });
  });
});

describe("state absent (withoutEntries): the same rule", () => {
  it("one occurrence taken back, the copy kept and named", () => {
    expect(withoutEntries(withCopy("next"), [ENTRY])).toEqual({
      content: `${STOCK}${ADMIN}\n${OURS}\n`,
      removed: [ENTRY],
      copies: [ENTRY],
    });
  });

  it("one line, no copy: taken back, nothing named; an entry not recorded is not touched", () => {
    expect(withoutEntries(`${STOCK}${OURS}\n`, [ENTRY])).toEqual({ content: STOCK, removed: [ENTRY], copies: [] });
    expect(withoutEntries(`${STOCK}${OURS}\n`, [OTHER]).removed).toEqual([]);
  });
});
