// The login's proof after changes (issue 30): who listened right after the last restart or reload stands only
// while nothing but the grants inventory was written since; any other change after it (TLS, extensions, a
// start), or none that read it, and the login looks again.
import { listenerSince } from "../../handlers/install-postgres/handler";
import type { ListenerSeen } from "../../handlers/install-postgres/server-look";

const fact = (name: string) => ({ name, writer: "root" as const, code: 0, text: "" });
const seen: ListenerSeen = {
  port: 5432,
  unit: "postgresql@15-main",
  listeners: fact("listeners"),
  mainPid: fact("main_pid"),
  holders: fact("holders"),
  parents: fact("parents"),
};
const applied = (kind: string, outcome?: object) =>
  ({ change: { kind, what: [], why: "", apply: async () => undefined }, outcome }) as never;

describe("listenerSince", () => {
  it("the restart's listener, when only the inventory was written after it", () => {
    expect(listenerSince([applied("role-database"), applied("restart", { listener: seen })])).toBe(seen);
    expect(listenerSince([applied("reload", { listener: seen }), applied("inventory")])).toBe(seen);
  });

  it.each(["tls", "extensions", "cluster-start", "configuration", "role-database"])(
    "none when a %s change came after it: the login looks again",
    (kind) => {
      expect(listenerSince([applied("restart", { listener: seen }), applied(kind), applied("inventory")])).toBe(
        undefined,
      );
    },
  );

  it("none when no restart or reload read it", () => {
    expect(listenerSince([applied("role-database"), applied("inventory")])).toBe(undefined);
    expect(listenerSince([])).toBe(undefined);
  });
});
