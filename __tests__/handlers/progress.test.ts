import { formatDuration, Progress } from "../../handlers/common/progress";
import { SecretScrubber } from "../../lib/shared/secrets";

describe("Progress", () => {
  it("prints tagged start and end lines with the duration and records the timing", async () => {
    const lines: string[] = [];
    let t = 1000;
    const p = new Progress("install-packages", {
      write: (l) => lines.push(l),
      now: () => t,
      secrets: new SecretScrubber(),
    });
    await p.step(
      "apt-get update",
      async () => {
        t += 1400;
      },
      "apt_update",
    );
    expect(lines).toEqual(["[install-packages] apt-get update ...", "[install-packages] apt-get update ... 1.4s"]);
    expect(p.timings).toEqual({ apt_update: 1400 });
  });

  it("says a step failed and still records its time", async () => {
    const lines: string[] = [];
    let t = 0;
    const p = new Progress("x", { write: (l) => lines.push(l), now: () => t, secrets: new SecretScrubber() });
    await expect(
      p.step("boom", async () => {
        t += 200;
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(lines[1]).toBe("[x] boom ... failed after 0.2s");
    expect(p.timings.boom).toBe(200);
  });

  it("scrubs secrets from every line", () => {
    const lines: string[] = [];
    const secrets = new SecretScrubber();
    secrets.add("topsecret-password", "db_password");
    new Progress("x", { write: (l) => lines.push(l), secrets }).info("using topsecret-password");
    expect(lines).toEqual(["[x] using [redacted:db_password]"]);
  });

  it("formats durations as seconds with one decimal", () => {
    expect(formatDuration(1449)).toBe("1.4s");
    expect(formatDuration(0)).toBe("0.0s");
  });
});
