// Decisions that act as root on a path, delete, sign or send a secret take only facts root alone can write
// (DESIGN.md, turn 4). The types say so: tsc fails on any line below marked @ts-expect-error that compiles
// (a decision loosened to take any Fact). And at run time each decision refuses such a fact all the same,
// for facts widened past the types (a look built at run time) or code in plain JavaScript.
import { proxyFileFrom } from "../../handlers/common/apt-proxy";
import { sourcesListingFrom } from "../../handlers/common/apt-sources-look";
import { transactionFrom } from "../../handlers/common/apt-transaction";
import { grantsFrom } from "../../handlers/common/grants";
import { osFromFact } from "../../handlers/common/os-release";
import { inventoryFrom } from "../../handlers/common/package-inventory";
import { removalFrom } from "../../handlers/common/removal";
import { requireSystemdFrom } from "../../handlers/common/systemd";
import { type Fact, type RootFact, rootFact, type Writer } from "../../handlers/common/vm-facts";
import { daemonJsonIn } from "../../handlers/install-docker/docker-state";
import { VM_LOOKS } from "../../handlers/vm-looks";

const fact = <W extends Writer>(writer: W, text = ""): Fact<W> => ({
  name: `a ${writer} probe`,
  writer,
  code: 0,
  text,
});
const root = fact("root");
const user = fact("anyone");
const service = fact("service");
const TX = {
  "before.time": root,
  "before.packages": root,
  "before.groups": root,
  "before.users": root,
  status: root,
  "after.groups": root,
  "after.users": root,
};
const REMOVAL = { inventory: root, dpkg: root, groups: root, users: root, dpkgLog: root };
/** What a look built at run time gives: the writer is known only then. */
const widened: Fact = fact("anyone");

const REFUSED = /takes only what root alone can write on the VM, and a (anyone|service) probe can be written by/;

describe("decisions that act as root, delete, sign or send a secret", () => {
  const decisions: [string, () => unknown][] = [
    // @ts-expect-error a user's fact cannot say what a removal deletes
    ["removal: the inventory", () => removalFrom({ ...REMOVAL, inventory: user }, "x")],
    // @ts-expect-error nor which accounts are there to delete
    ["removal: the accounts", () => removalFrom({ ...REMOVAL, groups: service }, "x")],
    // @ts-expect-error nor whether a recorded package is still the one vm-install installed
    ["removal: dpkg's log", () => removalFrom({ ...REMOVAL, dpkgLog: user }, "x")],
    // @ts-expect-error what an install recorded is later deleted
    ["the package record", () => transactionFrom({ ...TX, status: user })],
    // @ts-expect-error the inventory names what state absent removes
    ["the inventory", () => inventoryFrom(service)],
    // @ts-expect-error the grants inventory names the only grants a rerun revokes
    ["the grants inventory", () => grantsFrom(user)],
    // @ts-expect-error stale sources are removed or rewritten as root
    ["stale apt sources", () => sourcesListingFrom({ sources: user, keyrings: root, trusted: root })],
    // @ts-expect-error daemon.json is rewritten as root from what it holds
    ["daemon.json", () => daemonJsonIn(user)],
    // @ts-expect-error the proxy file is rewritten or removed as root
    ["the apt proxy file", () => proxyFileFrom(widened)],
    // @ts-expect-error the codename goes into repository lines root writes
    ["os-release", () => osFromFact(user)],
    // @ts-expect-error systemd's answer lets root start services
    ["systemd", () => requireSystemdFrom(widened, "Docker")],
  ];

  it.each(decisions)("%s: a fact another user can write is refused at run time too", (_what, decide) => {
    expect(decide).toThrow(REFUSED);
  });

  it("the same decisions take root's facts", () => {
    expect(removalFrom({ ...REMOVAL, inventory: { ...root, code: 3 } }, "x").set).toEqual({
      remove: [],
      kept: [],
    });
    expect(daemonJsonIn({ ...root, code: 3 })).toEqual({ kind: "absent" });
    expect(proxyFileFrom(root)).toBe("");
  });

  it("rootFact narrows a widened fact that is root's, and refuses one that is not", () => {
    const dynamic: Fact = fact("root", "x");
    const narrowed: RootFact = rootFact(dynamic, "a test");
    expect(narrowed.text).toBe("x");
    expect(() => rootFact(widened, "a test")).toThrow(REFUSED);
  });
});

describe("what root reads on a service user's behalf", () => {
  // A probe reading a file's content as root follows whatever link the file's owner plants there, and the
  // content reaches a job message (the log's FATAL lines) or a file written back as that user (pg_hba.conf).
  const READS_CONTENT = /(^|[;&|(]\s*|\s)(cat|tail|head|sed|awk|grep|openssl \w+ -in) /;

  it("every probe that reads the content of a file a service user can write reads it as that user", () => {
    const asRoot = VM_LOOKS.flatMap((l) =>
      l.probes
        .filter((p) => p.writer === "service" && READS_CONTENT.test(p.command) && !p.readAs)
        .map((p) => `${l.look}: ${p.name}`),
    );
    expect(asRoot).toEqual([]);
    const readAs = VM_LOOKS.flatMap((l) => l.probes.filter((p) => p.readAs).map((p) => p.name));
    expect(readAs).toEqual(expect.arrayContaining(["cert", "key", "dropin", "log", "hba:0"]));
  });
});
