// User-data for a sandbox booted with cloud-init (NoCloud seed): the pieces a cloud platform puts
// together, so that the twin and the CLI compose it the way a real platform would. cloud-init reads a
// MIME multipart/mixed message part by part (cloudinit/user_data.py walks it, nested multiparts
// included) and merges the text/cloud-config parts in order; see docs/twin.md or dev/sandbox/README.md for
// the merge rules the twin relies on.
import { randomBytes } from "node:crypto";

/** The cloud-config part a platform adds for its login user: its key, passwordless sudo, bash. */
export function loginUserCloudConfig(user: string, publicKey: string): string {
  // JSON strings are YAML flow scalars: nothing in a key comment can break the document.
  return [
    "#cloud-config",
    "users:",
    `  - name: ${JSON.stringify(user)}`,
    `    ssh_authorized_keys: [${JSON.stringify(publicKey.trim())}]`,
    '    sudo: "ALL=(ALL) NOPASSWD:ALL"',
    "    shell: /bin/bash",
    "    lock_passwd: true",
    "",
  ].join("\n");
}

/** What cloud-init makes of a part, from its first line (cloudinit/handlers/__init__.py's INCLUSION_TYPES_MAP). */
export function userDataKind(text: string): "cloud-config" | "shellscript" | "multipart" | undefined {
  const first = text.split("\n", 1)[0].trimEnd();
  if (first === "#cloud-config") return "cloud-config";
  if (first.startsWith("#!")) return "shellscript";
  if (mimeHeaders(text)?.get("content-type")?.startsWith("multipart/")) return "multipart";
  return undefined;
}

/** The header block of a MIME message, lower-cased names; undefined when the text does not start with one. */
export function mimeHeaders(text: string): Map<string, string> | undefined {
  const end = text.search(/\r?\n\r?\n/);
  if (end < 0) return undefined;
  const lines = text.slice(0, end).split(/\r?\n/);
  const out = new Map<string, string>();
  let last = "";
  for (const l of lines) {
    if (/^[ \t]/.test(l) && last) out.set(last, `${out.get(last)} ${l.trim()}`);
    else {
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(l);
      if (!m) return undefined;
      last = m[1].toLowerCase();
      out.set(last, m[2]);
    }
  }
  return out;
}

const CONTENT_TYPE = { "cloud-config": "text/cloud-config", shellscript: "text/x-shellscript" } as const;

function leafPart(text: string, filename: string): string {
  const kind = userDataKind(text);
  if (kind !== "cloud-config" && kind !== "shellscript") {
    throw new Error(`user-data part ${filename} is neither #cloud-config nor a #! script`);
  }
  // 7bit keeps the seed readable on the VM; anything else travels as base64, which cloud-init decodes.
  const plain = Buffer.from(text).every((b) => b > 0 && b < 0x80) && text.split("\n").every((l) => l.length < 990);
  return [
    `Content-Type: ${CONTENT_TYPE[kind]}; charset="${plain ? "us-ascii" : "utf-8"}"`,
    "MIME-Version: 1.0",
    `Content-Transfer-Encoding: ${plain ? "7bit" : "base64"}`,
    `Content-Disposition: attachment; filename="${filename}"`,
    "",
    plain
      ? text
      : (
          Buffer.from(text)
            .toString("base64")
            .match(/.{1,76}/g) ?? []
        ).join("\n"),
  ].join("\n");
}

/**
 * One multipart/mixed user-data of the given parts, in order. A part that is itself multipart is nested
 * as it is (its own headers and boundary), which cloud-init walks like any other part.
 */
export function multipartUserData(parts: { text: string; filename: string }[]): string {
  const bodies = parts.map((p) => {
    if (userDataKind(p.text) === "multipart") return p.text.replace(/\s*$/, "");
    return leafPart(p.text, p.filename);
  });
  let boundary: string;
  do boundary = `==vm-install-${randomBytes(12).toString("hex")}==`;
  while (bodies.some((b) => b.includes(boundary)));
  return [
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    "MIME-Version: 1.0",
    "",
    ...bodies.flatMap((b) => [`--${boundary}`, b]),
    `--${boundary}--`,
    "",
  ].join("\n");
}

/** NoCloud meta-data: a fresh instance-id per sandbox, so cloud-init runs its per-instance modules. */
export function nocloudMetaData(hostname: string): string {
  return `instance-id: ${hostname}-${randomBytes(4).toString("hex")}\nlocal-hostname: ${hostname}\n`;
}
