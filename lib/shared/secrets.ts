// Known secret values (the SSH private key, a database password, ...) are replaced in everything the
// handlers let out: captured command output, error messages, progress lines. Output from the VM is not
// under our control (a failing psql may echo a statement, a shell may print an environment), so rather
// than trust every call site, one registry scrubs at the boundaries.

/**
 * Shorter values are not replaced in place: a short secret is likely to occur in ordinary text ("a",
 * "root", "password"), and "[redacted]" everywhere it occurs would spell it out by its positions. A text
 * that contains one is withheld whole instead. 12 is also the shortest password the installers accept.
 */
const MIN_REDACTABLE_CHARS = 12;

/** A registry of secret values and the labels they are replaced with. */
export class SecretScrubber {
  private readonly values = new Map<string, string>();
  /** Values too short to replace in place (see MIN_REDACTABLE_CHARS), with their labels. */
  private readonly short = new Map<string, string>();

  /**
   * @param minChars values shorter than this are not registered. @default 1 (every value: a handler
   *   knows its secrets). The job runner, which guesses secrets from field names, uses 4 so that a
   *   short value cannot mangle ordinary output.
   */
  constructor(private readonly minChars = 1) {}

  /**
   * Registers `value` (ignored when empty) so that `scrub` replaces it by `[redacted:<label>]`
   * (`[redacted]` without a label). Also registers the forms the value takes when it is JSON-escaped
   * and, for multi-line values such as a PEM key, each substantial line on its own (a tool may print
   * one line of it).
   */
  add(value: string | undefined, label?: string): void {
    if (!value || value.length < this.minChars) return;
    const marker = label ? `[redacted:${label}]` : "[redacted]";
    const forms = new Set<string>([
      value,
      value.trim(),
      JSON.stringify(value).slice(1, -1),
      JSON.stringify(value.trim()).slice(1, -1),
    ]);
    if (value.includes("\n")) {
      for (const line of value.split(/\r?\n/)) {
        const body = line.trim();
        // Armour lines ("-----BEGIN ... KEY-----") are public knowledge; the base64 body is not.
        if (body.length >= 8 && !body.startsWith("-----")) forms.add(body);
      }
    }
    for (const form of forms) {
      if (form.length < this.minChars) continue;
      if (form.length >= MIN_REDACTABLE_CHARS) this.values.set(form, marker);
      else this.short.set(form, label ?? "a secret");
    }
  }

  /**
   * `text` with every registered value replaced; longest values first so a part never masks a whole. A
   * text holding a value too short to replace safely is withheld whole, naming only the label.
   */
  scrub(text: string): string {
    if ((this.values.size === 0 && this.short.size === 0) || !text) return text;
    for (const [form, label] of this.short) {
      if (text.includes(form)) return `[withheld: this text contains ${label}, a secret too short to redact in place]`;
    }
    let out = text;
    const forms = [...this.values.keys()].sort((a, b) => b.length - a.length);
    for (const form of forms) out = out.split(form).join(this.values.get(form)!);
    return out;
  }

  /** An Error with a scrubbed message and stack (the original is not changed). */
  scrubError(err: unknown): Error {
    const source = err instanceof Error ? err : new Error(String(err));
    const clean = new Error(this.scrub(source.message));
    clean.name = source.name;
    if (source.stack) clean.stack = this.scrub(source.stack);
    return clean;
  }

  /** How many distinct forms are registered (for tests and diagnostics; never the values). */
  get size(): number {
    return this.values.size + this.short.size;
  }

  /** Forgets every value: for tests, and for a warm runtime that reuses the process for another job. */
  clear(): void {
    this.values.clear();
    this.short.clear();
  }
}

/**
 * The process-wide registry. Handlers register into it (handler-kit registers SSH_KEY), and progress,
 * exec and handler-kit scrub with it by default, so a value registered anywhere is hidden everywhere.
 */
export const secrets = new SecretScrubber();
