// The login check with a password whose SASLprep PostgreSQL may have left in one of two forms (saslprep.ts):
// the likelier first, the other only after the server said "wrong password" (28P01), and never for another
// refusal; a password with one form is tried once.
import { ServerRefused } from "../../handlers/install-postgres/pg-wire";
import { loginPrepared } from "../../handlers/install-postgres/verify";

const ANSWER = { sessionUser: "app", serverVersion: "15.10", tls: false };

/** A login that accepts only `stored`, refusing the rest as the server would; every form tried, in order. */
function server(stored: string, refusal = "28P01") {
  const tried: string[] = [];
  const login = async (prepared: string) => {
    tried.push(prepared);
    if (prepared !== stored) throw new ServerRefused(`password authentication failed for user "app"`, refusal);
    return ANSWER;
  };
  return { tried, login };
}

describe("the login check's two SASLprep forms", () => {
  test("U+2168 stored normalized: the first form logs in, once", async () => {
    const s = server("IX");
    await expect(loginPrepared("\u2168", s.login)).resolves.toEqual(ANSWER);
    expect(s.tried).toEqual(["IX"]);
  });

  test("U+2168 stored as given: refused with 28P01, then the other form logs in", async () => {
    const s = server("\u2168");
    await expect(loginPrepared("\u2168", s.login)).resolves.toEqual(ANSWER);
    expect(s.tried).toEqual(["IX", "\u2168"]);
  });

  test("neither form: the second refusal is the error; another refusal (28000) is not retried", async () => {
    const wrong = server("nothing like it");
    await expect(loginPrepared("\u2168", wrong.login)).rejects.toMatchObject({ sqlstate: "28P01" });
    expect(wrong.tried).toEqual(["IX", "\u2168"]);
    const noEntry = server("nothing like it", "28000");
    await expect(loginPrepared("\u2168", noEntry.login)).rejects.toMatchObject({ sqlstate: "28000" });
    expect(noEntry.tried).toEqual(["IX"]);
  });

  test("one form (ASCII, or NFKC already): tried once, the refusal is the error", async () => {
    for (const password of ["s3cret", "p\u00e4ss"]) {
      const s = server("other");
      await expect(loginPrepared(password, s.login)).rejects.toMatchObject({ sqlstate: "28P01" });
      expect(s.tried).toEqual([password]);
    }
  });
});
