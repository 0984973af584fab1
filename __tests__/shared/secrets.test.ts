import { SecretScrubber } from "../../lib/shared/secrets";

const KEY = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACDx0gXbHcFzL1i0hM9Ypj2mtz9r4T8pUzvFN8e2q6h9dQAAAJgAAAAAAAAA",
  "-----END OPENSSH PRIVATE KEY-----",
  "",
].join("\n");

describe("SecretScrubber", () => {
  it("replaces a registered value with its label", () => {
    const s = new SecretScrubber();
    s.add("hunter2-long", "db_password");
    expect(s.scrub("psql: password hunter2-long rejected")).toBe("psql: password [redacted:db_password] rejected");
  });

  it("hides each line of a key, not only the whole key", () => {
    const s = new SecretScrubber();
    s.add(KEY, "SSH_KEY");
    expect(s.scrub(`whole:\n${KEY}`)).not.toContain("b3BlbnNzaC1rZXkt");
    const oneLine = KEY.split("\n")[2];
    expect(s.scrub(`tool printed ${oneLine} here`)).toBe("tool printed [redacted:SSH_KEY] here");
    // The armour is public and stays readable.
    expect(s.scrub("-----BEGIN OPENSSH PRIVATE KEY-----")).toBe("-----BEGIN OPENSSH PRIVATE KEY-----");
  });

  it("hides the JSON-escaped form too", () => {
    const s = new SecretScrubber();
    s.add('pa"ss\\word', "pw");
    expect(s.scrub(JSON.stringify({ password: 'pa"ss\\word' }))).toBe('{"password":"[redacted:pw]"}');
  });

  it("never spells out a short secret by where it occurs: a text holding one is withheld whole", () => {
    const s = new SecretScrubber();
    s.add("a", "db_password");
    const out = s.scrub("a banana for the team");
    // Replacing each "a" would leave "[redacted] b[redacted]n[redacted]n[redacted]...": the value by its positions.
    expect(out).toBe("[withheld: this text contains db_password, a secret too short to redact in place]");
    expect(s.scrub("nothing of it here: xyz")).toBe("nothing of it here: xyz");
  });

  it("replaces a value of 12 or more characters in place", () => {
    const s = new SecretScrubber();
    s.add("twelve-chars", "db_password");
    expect(s.scrub("pw twelve-chars ok")).toBe("pw [redacted:db_password] ok");
  });

  it("ignores empty values and leaves text alone when nothing is registered", () => {
    const s = new SecretScrubber();
    s.add("", "x");
    s.add(undefined, "y");
    expect(s.size).toBe(0);
    expect(s.scrub("anything")).toBe("anything");
  });

  it("scrubs message and stack of an error, leaving the original as it was", () => {
    const s = new SecretScrubber();
    s.add("s3cr3t-value", "token");
    const original = new TypeError("bad token s3cr3t-value");
    const clean = s.scrubError(original);
    expect(clean.message).toBe("bad token [redacted:token]");
    expect(clean.name).toBe("TypeError");
    expect(clean.stack).not.toContain("s3cr3t-value");
    expect(original.message).toContain("s3cr3t-value");
  });
});
