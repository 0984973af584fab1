// The links of the project's markdown (README.md, docs/*.md) as GitHub renders them: every relative link,
// where it points, and the anchors a page has (GitHub's heading slugs), for __tests__/docs-links.test.ts.
import * as fs from "node:fs";
import * as path from "node:path";

export interface Link {
  /** The file the link is in, relative to the root. */
  readonly from: string;
  readonly line: number;
  /** As written: "docs/secrets.md#what-the-state-holds", "#exit-codes". */
  readonly target: string;
}

/** The lines outside fenced code blocks, with inline code spans blanked (a link in code is no link). */
function proseLines(text: string): { line: number; text: string }[] {
  let fence: string | undefined;
  return text.split("\n").flatMap((raw, i) => {
    const opens = /^\s*(```|~~~)/.exec(raw);
    if (opens) {
      if (fence === undefined) fence = opens[1];
      else if (opens[1] === fence) fence = undefined;
      return [];
    }
    return fence === undefined ? [{ line: i + 1, text: raw.replace(/`[^`]*`/g, (m) => " ".repeat(m.length)) }] : [];
  });
}

/**
 * GitHub's anchor for a heading: lower case, anything but letters, digits, spaces, `-` and `_` dropped
 * (so inline code keeps its text, loses its backticks), each space a `-`.
 */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .replace(/[^\p{L}\p{M}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a page: each heading's slug, a repeated one suffixed -1, -2, ... as GitHub does. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fence: string | undefined;
  for (const raw of text.split("\n")) {
    const opens = /^\s*(```|~~~)/.exec(raw);
    if (opens) {
      if (fence === undefined) fence = opens[1];
      else if (opens[1] === fence) fence = undefined;
      continue;
    }
    const h = fence === undefined ? /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw) : null;
    if (!h) continue;
    const slug = githubSlug(h[1]);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** The relative links of `text` (the file `from`): not http(s), mailto or another scheme. */
export function relativeLinks(from: string, text: string): Link[] {
  return proseLines(text).flatMap(({ line, text: prose }) =>
    [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
      .map((m) => m[1])
      .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .map((target) => ({ from, line, target })),
  );
}

/** Where a link points, relative to the root, and its anchor. */
function resolve(link: Link): { file: string; anchor?: string } {
  const [file, anchor] = link.target.split("#", 2) as [string, string | undefined];
  const to = file === "" ? link.from : path.posix.normalize(path.posix.join(path.posix.dirname(link.from), file));
  return { file: to, anchor: anchor === undefined ? undefined : decodeURIComponent(anchor) };
}

/** Each broken link, as "<file>:<line>: <target>: <why>"; `read` gives a file's text, undefined when absent. */
export function brokenLinks(files: readonly string[], read: (file: string) => string | undefined): string[] {
  return files.flatMap((from) =>
    relativeLinks(from, read(from) ?? "").flatMap((link) => {
      const { file, anchor } = resolve(link);
      const where = `${from}:${link.line}: ${link.target}`;
      if (file.startsWith("../")) return [`${where}: outside the repository`];
      const text = read(file);
      if (text === undefined) return [`${where}: no file ${file}`];
      if (anchor === undefined || !file.endsWith(".md")) return [];
      return anchorsOf(text).has(anchor) ? [] : [`${where}: ${file} has no heading whose anchor is #${anchor}`];
    }),
  );
}

/** The markdown files reached from `start` by following relative links to other .md files. */
export function reachable(start: string, read: (file: string) => string | undefined): Set<string> {
  const seen = new Set<string>([start]);
  const queue = [start];
  while (queue.length) {
    const from = queue.shift()!;
    for (const link of relativeLinks(from, read(from) ?? "")) {
      const { file } = resolve(link);
      if (file.endsWith(".md") && !seen.has(file) && read(file) !== undefined) {
        seen.add(file);
        queue.push(file);
      }
    }
  }
  return seen;
}

/** A reader of files under `root`: the text, or undefined when there is none (a folder reads as ""). */
export function fileReader(root: string): (file: string) => string | undefined {
  return (file) => {
    const full = path.join(root, file);
    if (!fs.existsSync(full)) return undefined;
    return fs.statSync(full).isDirectory() ? "" : fs.readFileSync(full, "utf8");
  };
}
