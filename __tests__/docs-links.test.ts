// The README and docs/ hold together (issue 33 item 1): a README of at most 200 lines that starts with the two
// commands, every relative link to a file that exists and an anchor a heading there makes, every page reached
// from the README's index, and the quickstart's two cdktf.json files accepted by synth's own check.
import * as fs from "node:fs";
import * as path from "node:path";
import { parseConfig } from "../lib/construct/config/parse";
import { PROJECT_ROOT } from "../lib/entry-points";
import { anchorsOf, brokenLinks, fileReader, githubSlug, reachable, relativeLinks } from "./support/markdown-links";
import { quickstartCommand, quickstartFiles, readme } from "./support/quickstart";

const pages = fs
  .readdirSync(path.join(PROJECT_ROOT, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`)
  .sort();
const read = fileReader(PROJECT_ROOT);

/** A reader of the given files only, for the checker's own cases. */
const files =
  (all: Record<string, string>) =>
  (file: string): string | undefined =>
    all[file];

describe("README.md and docs/", () => {
  it("has a README of at most 200 lines", () => {
    expect(readme().split("\n").length - 1).toBeLessThanOrEqual(200);
  });

  it("starts with the two commands CI and the team's guide depend on, then the status table", () => {
    const text = readme();
    const firstBlock = /```bash\n([\s\S]*?)\n```/.exec(text);
    expect(firstBlock?.[1]).toMatch(/^bash bin\/setup && npm run demo$/m);
    expect(firstBlock?.[1]).toMatch(/^bash bin\/test$/m);
    // Only the title and one paragraph come before them.
    expect(
      text
        .slice(0, firstBlock!.index)
        .trim()
        .split(/\n\s*\n/),
    ).toHaveLength(2);
    expect(text.indexOf("VM    INSTALLER         STATUS")).toBeGreaterThan(firstBlock!.index);
  });

  it("has docs/ pages, one per topic", () => {
    expect(pages.length).toBeGreaterThanOrEqual(20);
  });

  it("links only to files that exist, and to anchors their headings make", () => {
    expect(brokenLinks(["README.md", ...pages], read)).toEqual([]);
  });

  it("reaches every docs/ page from the README (its index, or a page it links)", () => {
    const reached = reachable("README.md", read);
    expect(pages.filter((p) => !reached.has(p))).toEqual([]);
  });
});

describe("the link check itself", () => {
  it("names a missing file, a missing anchor and a link out of the repository, with file and line", () => {
    const docs = files({
      "README.md": "# T\n\n[a](docs/a.md) [gone](docs/gone.md)\n[up](../other/README.md)\n",
      "docs/a.md": "# A page\n\n[back](../README.md#t) [wrong](../README.md#no-such) [self](#a-page) [x](#nope)\n",
    });
    expect(brokenLinks(["README.md", "docs/a.md"], docs)).toEqual([
      "README.md:3: docs/gone.md: no file docs/gone.md",
      "README.md:4: ../other/README.md: outside the repository",
      "docs/a.md:3: ../README.md#no-such: README.md has no heading whose anchor is #no-such",
      "docs/a.md:3: #nope: docs/a.md has no heading whose anchor is #nope",
    ]);
  });

  it("makes anchors as GitHub does: code and punctuation dropped, spaces to hyphens, repeats numbered", () => {
    expect(githubSlug('Taking software back off: `state: "absent"`')).toBe("taking-software-back-off-state-absent");
    expect(githubSlug("Day two: status, drift, shared state, a portable cdktf.out")).toBe(
      "day-two-status-drift-shared-state-a-portable-cdktfout",
    );
    expect(githubSlug("Your own cloud-init (`vms[].cloudInit`)")).toBe("your-own-cloud-init-vmscloudinit");
    expect([...anchorsOf("# Notes\n\n## Notes\n\n```\n# not a heading\n```\n## Notes\n")]).toEqual([
      "notes",
      "notes-1",
      "notes-2",
    ]);
  });

  it("ignores links in code and web links, and follows only .md links for reachability", () => {
    const text = "`[a](nowhere.md)`\n```\n[b](nowhere.md)\n```\n[web](https://example.com/x.md) [m](mailto:a@b)\n";
    expect(relativeLinks("README.md", text)).toEqual([]);
    const docs = files({
      "README.md": "[a](docs/a.md) [src](main.ts)\n",
      "docs/a.md": "[b](b.md)\n",
      "docs/b.md": "",
      "docs/c.md": "[a](a.md)\n",
    });
    expect([...reachable("README.md", docs)].sort()).toEqual(["README.md", "docs/a.md", "docs/b.md"]);
  });
});

describe("the quickstart's cdktf.json files", () => {
  const { nubes, existingHost } = quickstartFiles();

  it("are whole cdktf.json files: the checkout's app and schema", () => {
    const project = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, "cdktf.json"), "utf8"));
    for (const file of [nubes, existingHost]) {
      expect(file.app).toBe(project.app);
      expect(file.$schema).toBe(project.$schema);
      expect(file.language).toBe("typescript");
    }
  });

  it("a Nubes VM with sless jobs: accepted by synth's check as printed", () => {
    const config = parseConfig(nubes.context.vmInstall);
    expect(config.jobTarget).toBe("sless");
    expect(config.vms.map((vm) => vm.kind)).toEqual(["nubes"]);
  });

  it("an existing host with the local target and offline-safe settings: accepted by synth's check as printed", () => {
    const config = parseConfig(existingHost.context.vmInstall);
    expect(config.jobTarget).toBe("local");
    expect(config.vms.map((vm) => vm.kind)).toEqual(["existing"]);
    expect(config.vms[0].installers.docker).toMatchObject({ enabled: true, channel: "distro", verify: "daemon" });
    expect(Object.values(config.vms[0].installers).every((i) => i.enabled)).toBe(true);
  });

  it("prints the deploy with and without a terminal, and the day-two commands", () => {
    expect(quickstartCommand("npm run deploy", "--auto-approve")).toEqual([
      "npm",
      "run",
      "deploy",
      "--",
      "--auto-approve",
    ]);
    for (const command of ["npm run status", "npm run check", "npm run rerun", "npm run destroy"])
      expect(quickstartCommand(command)[2]).toBe(command.split(" ")[2]);
  });
});
