// docs/vm-facts.md's audit of what the installers read from the VM (issue 30): every probe of every look, with
// who on the VM can write what it reads and what the installer does with it. Generated from the looks'
// declarations (handlers/vm-looks.ts), so the table is the code.
import { VM_LOOKS } from "../../../handlers/vm-looks";

const WRITER_WORDS = { root: "root", service: "a service user", anyone: "any user" } as const;

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s+/g, " ").trim();

/** The table: installer, look, probe, writer, use; one row per probe. */
export function vmFactsReference(): string {
  const rows = VM_LOOKS.flatMap((l) =>
    l.probes.map(
      (p) =>
        `| ${cell(l.installer)} | ${cell(l.look)} | \`${p.name}\` | ${WRITER_WORDS[p.writer]}` +
        `${p.readAs ? ` (read as ${p.readAs})` : ""} | ${cell(p.use)} |`,
    ),
  );
  return ["| installer | look | probe | who can write it | use |", "|---|---|---|---|---|", ...rows].join("\n");
}
