// The user's own cloud-init (vms[].cloudInit), read at synth and merged by Terraform with the stack's part
// into the VM's cloud_init. Refused, with file and line, when cloud-init could not read it or when it fights
// the stack (a host key of its own, another login user). cloud-init reads user-data as YAML 1.1 (PyYAML:
// `yes` is true, 0644 is 420), so it is parsed as YAML 1.1 too and the VM gets the values cloud-init would
// have read (Terraform's yamlencode quotes every string); timestamps stay the text they were.
import * as fs from "node:fs";
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  type Pair,
  parseAllDocuments,
  parseDocument,
  type Tags,
  type YAMLError,
  type YAMLMap,
} from "yaml";

/** What cloud-init accepts as a user-data header for a cloud-config document. */
const HEADER = "#cloud-config";

/**
 * Keys that decide which host key the VM presents: the stack's part (the delivered key, or the image's
 * own for "first-contact"), so never the file's. ssh_publish_hostkeys only reports the public keys to the
 * datasource and stays allowed.
 */
const HOST_KEY_KEYS = ["ssh_keys", "ssh_deletekeys", "ssh_genkeytypes"];
/** Module lists: a list without cc_ssh or users-groups drops the host key or the login user. */
const MODULE_LISTS = ["cloud_init_modules", "cloud_config_modules", "cloud_final_modules"];

export interface CloudInitRead {
  /** The document as cloud-init reads it; absent when there are problems. */
  readonly document?: Record<string, unknown>;
  /** Each "line N: ..." or a problem with the whole file. */
  readonly problems: string[];
}

/** Reads and checks `file` for a VM whose login user is `loginUser`. */
export function readCloudInit(file: string, loginUser: string): CloudInitRead {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    return { problems: [`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`] };
  }
  return checkCloudInit(text, loginUser);
}

/** The checks of readCloudInit, on the file's text. */
export function checkCloudInit(text: string, loginUser: string): CloudInitRead {
  const parsed = parseCloudConfig(text);
  if (!("doc" in parsed)) return parsed;
  const problems = refusals(parsed, loginUser);
  if (problems.length > 0) return { problems };
  return { document: parsed.document, problems };
}

interface Parsed {
  readonly doc: Document.Parsed;
  readonly lines: LineCounter;
  /** What cloud-init will read: merge keys (<<) and aliases resolved. */
  readonly document: Record<string, unknown>;
}

/** The file as cloud-init reads it, or why it cannot be (an empty document is an empty mapping). */
function parseCloudConfig(text: string): Parsed | CloudInitRead {
  if (text.split(/\r?\n/, 1)[0].trimEnd() !== HEADER) {
    return {
      problems: [
        `line 1: must be "${HEADER}": only a cloud-config document can be merged with the stack's part ` +
          "(scripts go under runcmd, files under write_files)",
      ],
    };
  }
  const options = { version: "1.1", customTags: withoutTimestamps } as const;
  if (parseAllDocuments(text, options).length > 1) {
    return { problems: ['holds more than one YAML document ("---"); cloud-init reads one: merge them'] };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { ...options, lineCounter: lines });
  if (doc.errors.length > 0) return { problems: doc.errors.map(yamlProblem) };
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null))
    return { document: {}, problems: [] };
  if (!isMap(doc.contents)) {
    const line = lineOf(lines, doc.contents);
    return { problems: [`line ${line}: the document must be a mapping of cloud-config keys, not a list or a scalar`] };
  }
  return { doc, lines, document: doc.toJS({ maxAliasCount: 100 }) as Record<string, unknown> };
}

function yamlProblem(e: YAMLError): string {
  const message = e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "");
  return `line ${e.linePos?.[0].line ?? "?"}: not YAML: ${message}`;
}

/**
 * What the file may not set, by the key cloud-init reads: a key can reach it without being written at
 * the top level (through <<), so the file's own lines only name where.
 */
function refusals({ doc, lines, document }: Parsed, loginUser: string): string[] {
  const top = (doc.contents as YAMLMap).items as Pair<Node, Node | null>[];
  const pairOf = (key: string) => top.find((p) => isScalar(p.key) && String(p.key.value) === key);
  const merged = top.find((p) => isScalar(p.key) && (p.key as { source?: string }).source === "<<");
  const where = (key: string) => {
    const own = pairOf(key);
    if (own) return `line ${lineOf(lines, own.key)}: ${key}`;
    return `line ${lineOf(lines, merged?.key)}: ${key} (through the merge key <<)`;
  };
  return Object.entries(document).flatMap(([key, value]) => {
    const at = where(key);
    if (key === "users") return usersProblems(value, pairOf(key)?.value ?? null, lines, loginUser, at);
    const refusal = keyRefusal(key, value, loginUser);
    return refusal ? [`${at}${refusal}`] : [];
  });
}

/** Why one top-level key fights the stack (its text after the key's place), if it does. */
function keyRefusal(key: string, value: unknown, loginUser: string): string | undefined {
  if (HOST_KEY_KEYS.includes(key)) {
    return (
      ": the VM's host keys are the stack's: it delivers the VM's own key through cloud-init " +
      `(vms[].hostKeys "delivered") or leaves the image's (hostKeys "first-contact"); remove ${key}`
    );
  }
  if (MODULE_LISTS.includes(key)) {
    return (
      ": a module list of its own can leave out cloud-init's ssh or users-groups module, which the host key " +
      "and the login user need; remove it"
    );
  }
  if (key === "user") {
    return (
      `: the login user is vms[].user ("${loginUser}"), created from user_login and user_public_key; ` +
      "set vms[].user instead, and add other users under users:"
    );
  }
  if (key === "system_info" && isObject(value) && "default_user" in value) {
    return (
      `.default_user: the login user is vms[].user ("${loginUser}"); ` +
      "set vms[].user instead of the image's default user"
    );
  }
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * `users:` may add users, never redefine the login user: the stack appends that one itself (with its
 * key and sudo, as the platform makes it), since cloud-init would let this list replace the platform's.
 * `value` is the list as cloud-init reads it; `node` the file's, for line numbers where it has them.
 */
function usersProblems(value: unknown, node: Node | null, lines: LineCounter, loginUser: string, at: string): string[] {
  if (!Array.isArray(value)) return [`${at}: must be a list (a mapping with name: for each user to add, or "default")`];
  const items = isSeq(node) ? (node.items as Node[]) : [];
  const problems: string[] = [];
  value.forEach((item, i) => {
    const line = items[i] ? `line ${lineOf(lines, items[i])}: users entry` : `${at}: entry ${i + 1}`;
    const name = typeof item === "string" ? item : isObject(item) ? item.name : undefined;
    const text = typeof name === "string" || typeof name === "number" ? String(name) : undefined;
    if (text === undefined || text === "")
      problems.push(`${line}: needs a name (a mapping with name: <user>, or "default")`);
    else if (text === loginUser) {
      problems.push(
        `${line} "${text}" is the login user (vms[].user), which the stack adds with its key and sudo; ` +
          "leave it out of users:",
      );
    }
  });
  return problems;
}

function lineOf(
  lines: LineCounter,
  node: { range?: [number, number, number] | null } | null | undefined,
): number | string {
  return node?.range ? lines.linePos(node.range[0]).line : "?";
}

/** YAML 1.1's timestamp tag turns 2001-01-01 into a Date; PyYAML's date would print as the same text. */
function withoutTimestamps(tags: Tags): Tags {
  return tags.filter((t) => (typeof t === "string" ? t !== "timestamp" : t.tag !== "tag:yaml.org,2002:timestamp"));
}
