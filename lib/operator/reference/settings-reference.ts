// The installers' tables (docs/<installer>.md, docs/installers.md) and the JSON Schema of cdktf.json,
// generated from the settings'
// declarations (the installers' definitions, the stack's) so the docs cannot drift from the checks.
// `npm run docs` writes them; __tests__/reference.test.ts fails when the committed ones differ.

import { configSchema } from "../../construct/config/parse";
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import { JOB_MARGIN_SEC } from "../../construct/installers/installer-event";
import { APT_LOCK_SETTINGS } from "../../shared/apt-lock-settings";
import { APT_PROXY_SETTING } from "../../shared/apt-proxy";
import { allSettings } from "../../shared/installer-definition";
import type { Setting, Settings } from "../../shared/settings";
import { SSH_RETRY_SETTINGS } from "../../shared/ssh-retry";
import type { JsonSchema } from "../../shared/validate";

/** A value as the docs show it. */
function code(value: unknown): string {
  return `\`${JSON.stringify(value).replace(/,/g, ", ")}\``;
}

/** One table row of cells already escaped. */
export function row(...cells: string[]): string {
  return `| ${cells.join(" | ")} |`;
}

export function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** A rule's JSON Schema in words: the type and what it allows. */
export function typeWords(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => code(v)).join(" or ");
  switch (schema.type) {
    case "boolean":
      return "boolean";
    case "integer":
      return `integer ${schema.minimum}-${schema.maximum}`;
    case "array":
      return [
        "list",
        schema.minItems ? ` (at least ${schema.minItems})` : "",
        schema.uniqueItems ? " of distinct items" : "",
        `, each ${typeWords(schema.items as JsonSchema)}`,
      ].join("");
    case "string":
      return typeof schema.description === "string" ? schema.description : "string";
    default:
      // A union (anyOf) says in its description what it takes.
      return typeof schema.description === "string" ? schema.description : "value";
  }
}

export function defaultWords(s: Setting): string {
  if (s.default !== undefined) return code(s.default);
  return s.defaultDoc ?? "none";
}

/** One installer's page section (docs/<installer>.md): its settings' cdktf.json key, event key, type, default, doc. */
export function installerReference(def: CatalogEntry): string {
  const rows = Object.entries(allSettings(def)).map(([key, s]) => {
    const configKey = s.eventOnly ? "(event only)" : `\`${key}\``;
    const eventKey = s.event ? `\`${s.event}\`${s.eventRequired ? " (required)" : ""}` : "(stack only)";
    const secret = Object.entries(def.secrets ?? {}).find(([, from]) => from === key);
    const event = secret ? `\`${secret[0]}\` (secret, from \`TF_VAR_<${key}>\`)` : eventKey;
    return row(configKey, event, cell(typeWords(s.rule.schema)), cell(defaultWords(s)), cell(s.doc));
  });
  const own = Object.entries(def.result)
    .map(([field, doc]) => `\`${field}\` (${doc})`)
    .join("; ");
  return [
    `${def.doc}.`,
    "",
    "| cdktf.json key | event key | type | default | what it does |",
    "| --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `Its own result fields: ${cell(own)}.`,
  ].join("\n");
}

/** Event keys every installer takes, from `vms[].sshRetry` (ssh) or only in the event (apt): docs/installers.md. */
export function commonReference(): string {
  const rows = (group: string, settings: Settings, config?: string) =>
    Object.entries(settings).map(([key, s]) =>
      row(
        `\`${group}.${s.event}\``,
        config ? `\`${config}.${key}\`` : "(event only)",
        cell(typeWords(s.rule.schema)),
        cell(defaultWords(s)),
        cell(s.doc),
      ),
    );
  return [
    "| event key | cdktf.json key | type | default | what it does |",
    "| --- | --- | --- | --- | --- |",
    ...rows("ssh", SSH_RETRY_SETTINGS, "vms[].sshRetry"),
    ...rows("apt", APT_LOCK_SETTINGS),
    row(
      `\`${APT_PROXY_SETTING.event}\``,
      "`vms[].aptProxy`",
      cell(typeWords(APT_PROXY_SETTING.rule.schema)),
      cell(defaultWords(APT_PROXY_SETTING)),
      cell(APT_PROXY_SETTING.doc),
    ),
    row(
      "`time_budget_sec`",
      "(from `waitTimeoutSec`)",
      "integer 10-86400",
      `the job's wait_timeout_sec less ${JOB_MARGIN_SEC} s`,
      "Seconds the whole job may take; every inner limit (connect, lock waits, update, install) is cut to what " +
        "is left of it, and running out fails the job as a timeout naming the step it hit (a detached step goes " +
        "on on the VM; the next run waits for it).",
    ),
    row(
      "`check`",
      "(event only: `npm run check` sets it)",
      "boolean",
      "`false`",
      "Check mode: inspect as usual, change nothing on the VM (not even apt's lists), and report what a real run " +
        "would change in would_change (changed stays false).",
    ),
  ].join("\n");
}

/** The JSON Schema for cdktf.json: cdktf's own keys pass, `context.vmInstall` is checked key by key. */
export function cdktfJsonSchema(catalog: readonly CatalogEntry[] = INSTALLERS): JsonSchema {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $comment: "Generated by `npm run docs` from the installers' definitions; do not edit.",
    title: "cdktf.json for vm-install",
    type: "object",
    properties: {
      context: {
        type: "object",
        description: "cdktf's context; vm-install reads its vmInstall key",
        properties: {
          vmInstall: { ...configSchema(catalog), description: "vm-install's configuration (docs/configuration.md)" },
        },
        required: ["vmInstall"],
      },
    },
  };
}
