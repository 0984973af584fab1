// The one read-only look (as root) at what a third-party repository's older set-ups may have left: every
// apt source file, the legacy keyrings no package owns, and apt-key's trusted.gpg; its answers as root's facts
// (stale-repositories.ts removes what they name, a check says what a run would remove).
import { quote } from "../../lib/shared/shell-quote";
import { SOURCES_DIR } from "./apt-repository";
import { defineLook, type RootFact, rootFact } from "./vm-facts";

/** A source file as read from the VM. */
export interface SourceFile {
  path: string;
  text: string;
}

/** A keyring goes only when it is there and no package owns it: dpkg -S knows one a package ships. */
export const removable = (k: string) => `[ -e ${quote(k)} ] && ! dpkg -S ${quote(k)} >/dev/null 2>&1`;

/** Lines of "base64(a) base64(b)" (or one field): what the sources and keyrings probes print per item. */
function encodedLines(text: string): string[][] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ").map((f) => Buffer.from(f, "base64").toString("utf8")));
}

/** The look's answers (root's: what is removed comes from them) as source files, keyrings, trusted keys. */
export function sourcesListingFrom(facts: { sources: RootFact; keyrings: RootFact; trusted: RootFact }): {
  files: SourceFile[];
  trusted: string[];
  keyrings: string[];
} {
  const decision = "the removal of stale apt sources";
  const files = encodedLines(rootFact(facts.sources, decision).text).map(([path, text = ""]) => ({ path, text }));
  const keyrings = encodedLines(rootFact(facts.keyrings, decision).text).map(([k]) => k);
  const trusted = [...rootFact(facts.trusted, decision).text.matchAll(/^fpr:+([0-9A-F]{16,}):/gm)].map((m) => m[1]);
  return { files, trusted, keyrings };
}

const b64 = (word: string) => `"$(printf %s ${word} | base64 -w0)"`;

/** The one read-only look (as root): every source file, the legacy keyrings no package owns, apt-key's keys. */
export function sourcesLook(legacy: string[], withTrusted: boolean) {
  const sources = `/etc/apt/sources.list ${SOURCES_DIR}/*.list ${SOURCES_DIR}/*.sources`;
  // Legacy keyrings that exist and no package owns (dpkg -S reads every file list: only for files there).
  const keyrings = legacy.map((k) => `if ${removable(k)}; then echo ${b64(quote(k))}; fi`);
  return defineLook("the look at apt's sources", [
    {
      name: "apt.sources",
      command:
        `for f in ${sources}; do [ -f "$f" ] || continue; ` +
        `printf '%s %s\\n' ${b64('"$f"')} "$(base64 -w0 < "$f")"; done; true`,
      writer: "root",
      use: "older source lines for the same repository: disabled, or their file removed",
    },
    {
      name: "apt.keyrings",
      command: [...keyrings, "true"].join("; "),
      writer: "root",
      use: "keyrings only those older lines used, no package owns: removed",
    },
    {
      name: "apt.trusted",
      // apt-key's keyring: read with a throwaway gpg home so nothing is created for root.
      command: withTrusted
        ? `[ -s /etc/apt/trusted.gpg ] && command -v gpg >/dev/null || exit 3; h=$(mktemp -d); ` +
          `gpg --homedir "$h" --no-default-keyring --keyring /etc/apt/trusted.gpg --with-colons --list-keys; ` +
          `rm -rf "$h"`
        : "exit 3",
      writer: "root",
      use: "the repository's key in apt-key's trusted.gpg: deleted",
    },
  ] as const);
}
