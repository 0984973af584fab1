// The role's password is stored as a SCRAM-SHA-256 verifier computed here, so it must be the one PostgreSQL
// computes: checked against verifiers a real server stored (quotes, backslashes, every kind of SASLprep outcome),
// and a stored md5 or other verifier told apart from the same password's.
import { postgresSaslprep } from "../../handlers/install-postgres/saslprep";
import { readScramSecret, scramSecret, storedPasswordState } from "../../handlers/install-postgres/scram";

/**
 * [what, password, what PostgreSQL hashed, salt$StoredKey:ServerKey it stored]: ALTER ROLE ... PASSWORD on
 * PostgreSQL 15.18 (Debian 12), read back from pg_authid; 4096 iterations.
 */
const STORED: [string, string, string, string][] = [
  [
    "ASCII with a control character: copied as it is",
    "pass\u0007word",
    "pass\u0007word",
    "2Rw6sh4k460WX3mgoLecQg==$" +
      "aM/C6d6JOeFHfmIEaokbxUDz0zbk4aW0c/6I/ucf3Fw=:FQZveG0Hzl/MOcAI2kQJ1BsUzdSf7pZf7x4roDAQgVk=",
  ],
  [
    "U+00AD mapped to nothing",
    "pass\u00adword",
    "password",
    "3qngZCtnpwYkj590Fse3fw==$" +
      "g+nTnOgTITktw1JmiJBiSujMHFAXKJIajOeyBafx0PA=:RoI0FhOUipkEsu33yi6Aj8PQPkkgLRUmn78OctsX6EY=",
  ],
  [
    "nothing left after mapping: refused, hashed as it is",
    "\u00ad",
    "\u00ad",
    "DpLDvGJqyMM1Ak+/SPWxXA==$" +
      "bVqxeKM/kEkyPWMicqtR+Wt55O83ekxQ2anHcsfpKVk=:9it1ytHsvnVOTVoVH4q1rbnYa/argOY1ZWu4KuYVUtE=",
  ],
  [
    "U+00A0 mapped to a space",
    "pass\u00a0word",
    "pass word",
    "l92+OF0sFUKYTOceMfHF9w==$" +
      "2qjKOA6kJSl6kU8aB5z6QRrtVzbW2tkMUB79H1zS9F4=:BGgrSHR1BqCb1+MGbFGuuwt7/3pzkOPsp1i1CL77Q+Q=",
  ],
  [
    "U+2168 NFKC to IX",
    "\u2168pass",
    "IXpass",
    "Dzm8wH5i2gpktD6f1bPbmQ==$" +
      "Ir7YyfuOgIAxTh+IYe+XAaoZprWwcajYfxC6oDoMOBM=:B02XOuYreY9N2c2Jxhq+0bk3ULOiOs0ii8BYOIeaRmg=",
  ],
  [
    "U+FB01 NFKC to fi",
    "\ufb01sh",
    "fish",
    "JbqrrXYiHLaFwRdhEh1d9Q==$" +
      "vv5fBgdxqvp2eedCjscKuK7fg//lnujSJJw5bj5i7BU=:1hYqoU9bBwCJqQecqd2/jV5qO1hI1Y5sspg+O3wVYfs=",
  ],
  [
    "U+00A0 and U+2168",
    "vm\u00a0install\u2168",
    "vm installIX",
    "OpecQVFbxEuRT2CfcB55SA==$" +
      "KvruAgBNPlhIh4YiUKWu30kStbDjA4ZyZ9vHYMiPYfI=:/Q0jY8+0BcKnql5zl/Dwbiekn8fr7l9Mhg6MAo88F4k=",
  ],
  [
    "a control character beside non-ASCII: prohibited",
    "\u00e9\u0007",
    "\u00e9\u0007",
    "kV25jdm+FHPrerSW6qFK4Q==$" +
      "jug2CicyC/5mNPbNSAHJsbmew5DMYCXwszrZ895kbxI=:GsrvLkzQ/TQtzxUIahQK+Om6zAZsLV4vQKMxB+7qBEg=",
  ],
  [
    "U+FFFD: prohibited (C.6)",
    "\u00e9\ufffd",
    "\u00e9\ufffd",
    "f8TNWWuYiO7ZY7Xo5ftd6g==$" +
      "sNGqNfdzEwqLbFMht36f55IH2pR6Mv9E7pfQBVcDpoY=:lxaAcfLt4kGBj5LFX9Z8TUCc46DVdx0kMGdD0EMED7Y=",
  ],
  [
    "U+E000: prohibited (C.3)",
    "\u00e9\ue000",
    "\u00e9\ue000",
    "RcOsrkfyTgN4fC8cMbsWYQ==$" +
      "3FBp8kJNK4qCxdArgrqoppyyR9vcMcaZ5e/98TjFw0Q=:j076yW17mcZMeCwphSWxp6UeoA8Qra7nh0/pcIx4bQo=",
  ],
  [
    "U+0221, unassigned in Unicode 3.2",
    "\u00e9\u0221",
    "\u00e9\u0221",
    "yELjvGGQsWFjFVjHiU2bJA==$" +
      "6HKtQxb6ROVTXq+jB1sCyK91OXWeKNDNA3/xx4uoJb0=:HtLzosl4olvszOEPg8YZ250eKNcpUlw20LovjrztwDk=",
  ],
  [
    "right-to-left with a left-to-right letter",
    "\u05d0a\u05d1",
    "\u05d0a\u05d1",
    "mVwzpd0THypIvW4ZFa+Kfg==$" +
      "XHQ2WM+dWOZLkZsqySTTWAfaZPv+clTWY6HmmE9IRzE=:K2ZbdsKB+331PN9gicspgMPQ2VQoyodY2dWN+Q+My7Q=",
  ],
  [
    "right-to-left not ending right-to-left",
    "\u05d0\u05d11",
    "\u05d0\u05d11",
    "BmmlYq0ixjvce6vqVF6REw==$" +
      "JNTjbSp9dA6IbeRAKEeOlFIrexY/j9rw5Y57sP3h83c=:pY7deHM82APpHJadugUyncmkTE9BioTy20OWjsLg4F0=",
  ],
  [
    "right-to-left only",
    "\u05d0\u05d1\u05d2",
    "\u05d0\u05d1\u05d2",
    "lq8k38wy9sZn3riE4pjyGg==$" +
      "GDOImbN2O9FrOzI/enIxktTqM29H3htnkd70h0d805U=:psdVFgxAj3f7Qf4XOCKI+v87ux5w/wa4FcuLGlNmstg=",
  ],
  [
    "U+0340, prohibited before NFKC only",
    "a\u0340",
    "a\u0340",
    "26COe61Gn6ZyTQ0or0XbkQ==$" +
      "xEDDptiT95IPKMW/SY68jOR32GCKUpQagO94ZmLBNoM=:dJOwxxByMFfvVrlABMW/UOkqFIA6W2vy8m/j3XSgzRQ=",
  ],
  [
    "U+2152 (Unicode 5.2), unassigned before NFKC only",
    "\u2152x",
    "\u2152x",
    "rgm9eXA2tlRl/zrO7I5UGA==$" +
      "vDDMwnlczJ9a26bcPZJyLQukTZawRbvkE5tv5CJNSUg=:HFvLMxln9ZNg8eYGuF8ZYhqE1ltPqEhUErgRkH60B/Y=",
  ],
  [
    "U+FB1D last: right-to-left before NFKC only",
    "\u05d0\ufb1d",
    "\u05d0\u05d9\u05b4",
    "Vcajrw/zbp6z+bVQ2h0PKA==$" +
      "u0N/g8ZOnat5tRZZE49F4CEU2gkiZD4f99XsiKxvEB8=:DuFGTATHNTa/O2VdARvm/7Y3JwOKTZu11StgLx5zStg=",
  ],
  [
    "U+0627 U+0653 last: right-to-left after NFKC only",
    "\u0628\u0627\u0653",
    "\u0628\u0627\u0653",
    "65cdXZrPBzyqLXqLnUQcPg==$" +
      "cEiczjZtb2GFlkoVYiSlrUoM4OLnRod9dI2H5OxvHp8=:fuLhlPCaGIysZ4o9wURFRS2I0eQP34SP21HnRbQTTXk=",
  ],
];

// RFC 3454 C.1.2, non-ASCII space characters.
const NON_ASCII_SPACES = [0xa0, 0x1680, ...Array.from({ length: 12 }, (_, i) => 0x2000 + i), 0x202f, 0x205f, 0x3000];

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
    expect(postgresSaslprep("пароль\u00a0\ufb01\u00adü")[0]).toBe("пароль fiü");
    expect(storedPasswordState(cyrillic, "пароль\u00a0\ufb01\u00adü", "vec4")).toBe("same");
    expect(storedPasswordState("md535ff36c156bd993074a924c264a32f68", "pencil", "vec3")).toBe("md5");
    expect(storedPasswordState("md535ff36c156bd993074a924c264a32f68", "other", "vec3")).toBe("unset-or-other");
    expect(storedPasswordState(null, "pencil", "x")).toBe("unset-or-other");
    const fresh = readScramSecret(scramSecret("x")).secret;
    expect(fresh?.iterations).toBe(4096);
    expect(fresh?.salt).toHaveLength(16);
  });
});

describe("install-postgres: SASLprep as PostgreSQL applies it (saslprep.ts)", () => {
  it.each(STORED)("%s: what the server stored is among the forms, and the only one where it is certain", (...row) => {
    const [, password, hashed, stored] = row;
    const secret = `SCRAM-SHA-256$4096:${stored}`;
    const salt = readScramSecret(secret).secret?.salt as Buffer;
    const forms = postgresSaslprep(password);
    expect(forms).toContain(hashed);
    expect(forms.map((form) => scramSecret(form, salt) === secret)).toEqual(forms.map((form) => form === hashed));
    expect(storedPasswordState(secret, password, "w")).toBe("same");
    expect(storedPasswordState(secret, `${password}x`, "w")).toBe("different");
  });

  it("one form, the password itself, for ASCII, whatever the characters", () => {
    for (const password of ["pencil", "\u0001\u007f", `it's "q" \\ $x`, " lead and trail "]) {
      expect(postgresSaslprep(password)).toEqual([password]);
    }
  });

  it("one form wherever the mapped password is already NFKC: both sides check the same string", () => {
    expect(postgresSaslprep("пароль\u00a0ü")).toEqual(["пароль ü"]);
    expect(postgresSaslprep("密码\u3000密码")).toEqual(["密码 密码"]);
    expect(postgresSaslprep("\u05d0\u05d1\u05d2")).toEqual(["\u05d0\u05d1\u05d2"]);
    expect(postgresSaslprep("e\u0301")).toHaveLength(2); // NFKC composes it: before and after differ
    // U+034F (mapped to nothing) no longer keeps U+0653 from composing with the alef: two forms, and PostgreSQL,
    // checking before NFKC, finds the right-to-left text ending in a mark and hashes it as it is.
    expect(postgresSaslprep("\u0627\u034f\u0653")).toEqual(["\u0622", "\u0627\u034f\u0653"]);
  });

  it("the library maps one character to a space only for RFC 3454 C.1.2 (every code point checked)", () => {
    const toSpace: number[] = [];
    for (let cp = 0x80; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (String.fromCodePoint(cp).normalize("NFKC") === " ") toSpace.push(cp);
    }
    expect(toSpace.filter((cp) => !NON_ASCII_SPACES.includes(cp))).toEqual([]);
  });
});
