// The role's password is stored as a SCRAM-SHA-256 verifier computed here, so it must be the one PostgreSQL
// computes: checked against verifiers a real server stored (quotes, backslashes, non-ASCII that SASLprep
// maps), and a stored md5 or other verifier told apart from the same password's.
import {
  prepareApproximately,
  readScramSecret,
  scramSecret,
  storedPasswordState,
} from "../../handlers/install-postgres/scram";

describe("install-postgres: pure parts (scram.ts)", () => {
  it("SCRAM-SHA-256 secrets match what PostgreSQL 15 stored for the same passwords", () => {
    // Read back from pg_authid after CREATE ROLE ... PASSWORD on the sandbox (Debian 12, PostgreSQL 15.20).
    const pencil =
      "SCRAM-SHA-256$4096:xLT7FwwkS3/LQ3ZnHrdwFA==$Z6a80ul5T2+bLHSXhHsnFE+UcWIuIz3A4E7fJJhH+dg=:" +
      "8BP6quHfW3OxDUtEK1sYUXdRQFQGPCqye6rioI6LUQc=";
    expect(scramSecret("pencil", Buffer.from("xLT7FwwkS3/LQ3ZnHrdwFA==", "base64"))).toBe(pencil);
    expect(storedPasswordState(pencil, "pencil", "vec1")).toBe("same");
    expect(storedPasswordState(pencil, "pencil ", "vec1")).toBe("different");
    const quoted =
      "SCRAM-SHA-256$4096:kEa+cMwCTh/Lk4ZqXE3Seg==$wjeh1/7LJJpw9ljnxbGfrPACRa6ZclQxeUpbtni0u70=:" +
      "IbHbDsnSelZjtYEhtDT2mypLGdj+Bqwykw8uVU9VdDw=";
    expect(storedPasswordState(quoted, `it's "q" \\ $x`, "vec2")).toBe("same");
    // Non-ASCII: NBSP -> space, the fi ligature -> "fi" (NFKC), soft hyphen dropped, as the server's SASLprep did.
    const cyrillic =
      "SCRAM-SHA-256$4096:y607y+be9RAcU1+FWhF55A==$qcfvVIX9kfbrIBNrIlrGT1RK8i6LB9SJ4QtSxdl7Um0=:" +
      "9vOb9DK7AJUBpg6/vkUWhZyv0xjTpULqmgJRmVgX9Gk=";
    expect(prepareApproximately("пароль\u00a0\ufb01\u00adü")).toBe("пароль fiü");
    expect(storedPasswordState(cyrillic, "пароль\u00a0\ufb01\u00adü", "vec4")).toBe("same");
    expect(storedPasswordState("md535ff36c156bd993074a924c264a32f68", "pencil", "vec3")).toBe("md5");
    expect(storedPasswordState("md535ff36c156bd993074a924c264a32f68", "other", "vec3")).toBe("unset-or-other");
    expect(storedPasswordState(null, "pencil", "x")).toBe("unset-or-other");
    const fresh = readScramSecret(scramSecret("x")).secret;
    expect(fresh?.iterations).toBe(4096);
    expect(fresh?.salt).toHaveLength(16);
  });
});
