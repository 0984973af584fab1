// What a twin VM's cloud-init reads: the user-data the twin assumes Nubes composes from a nubes_vc_vm_v3
// (docs/twin.md): multipart/mixed, the platform's part first (user_login with user_public_key,
// passwordless sudo, bash), then the resource's cloud_init as given. cloud-init merges cloud-config parts
// with dict(replace)+list()+str() unless a part says otherwise (merge_how, Merge-Type): a cloud_init with
// its own `users:` drops user_login unless it lists it too or asks for list(append).

import { parse } from "yaml";
import { loginUserCloudConfig, mimeHeaders, multipartUserData, userDataKind } from "../../sandbox/cloud-init";
import { type CtyObject, UNKNOWN } from "../protocol/cty-value";
import { type Diagnostic, errorDiagnostic } from "../protocol/diagnostics";

export function vmUserData(planned: CtyObject): string {
  const platform = loginUserCloudConfig(String(planned.user_login), String(planned.user_public_key));
  const parts = [{ text: platform, filename: "nubes-platform.cfg" }];
  const own = planned.cloud_init;
  if (typeof own === "string" && own.trim()) parts.push({ text: own, filename: "cloud_init" });
  return multipartUserData(parts);
}

/** Why cloud-init would not take this as user-data, or undefined when it would. */
export function userDataProblem(text: string): string | undefined {
  const kind = userDataKind(text);
  if (kind === "shellscript") return undefined;
  if (kind === "cloud-config") return cloudConfigProblem(text);
  if (kind === "multipart") return multipartProblem(text);
  const first = JSON.stringify(text.split("\n", 1)[0].slice(0, 40));
  return `its first line ${first} is none of "#cloud-config", "#!" (a script) or a MIME multipart header`;
}

function cloudConfigProblem(text: string): string | undefined {
  let doc: unknown;
  try {
    // YAML 1.1, as cloud-init's PyYAML reads it (the stack's own check does the same:
    // lib/construct/config/cloud-init.ts).
    doc = parse(text, { version: "1.1" });
  } catch (e) {
    return `it is not YAML: ${(e as Error).message.split("\n")[0]}`;
  }
  // cloud-init only warns about anything but a mapping and then ignores the whole part.
  const mapping = doc === null || doc === undefined || (typeof doc === "object" && !Array.isArray(doc));
  if (!mapping) return "its YAML is not a mapping of cloud-config keys";
  return undefined;
}

const SUPPORTED_PARTS = new Set(["text/cloud-config", "text/x-shellscript"]);
const PART_TYPES = [...SUPPORTED_PARTS].join(" and ");

function multipartProblem(text: string): string | undefined {
  const type = mimeHeaders(text)?.get("content-type") ?? "";
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!boundary) return "its multipart Content-Type has no boundary";
  const chunks = text.split(`--${boundary}`);
  if (chunks.length < 3 || !chunks[chunks.length - 1].startsWith("--")) return `it has no closing --${boundary}-- line`;
  for (const [i, chunk] of chunks.slice(1, -1).entries()) {
    const body = chunk.replace(/^\r?\n/, "");
    const headers = mimeHeaders(body);
    const ctype = (headers?.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (!SUPPORTED_PARTS.has(ctype)) {
      return `part ${i + 1} has Content-Type ${JSON.stringify(ctype)}; the twin takes ${PART_TYPES}`;
    }
    const encoding = (headers?.get("content-transfer-encoding") ?? "7bit").toLowerCase();
    const payload = body.slice(body.search(/\r?\n\r?\n/)).replace(/^\s+/, "");
    const decoded = encoding === "base64" ? Buffer.from(payload, "base64").toString("utf8") : payload;
    const why = ctype === "text/cloud-config" ? cloudConfigProblem(decoded) : undefined;
    if (why) return `part ${i + 1} (text/cloud-config): ${why}`;
  }
  return undefined;
}

const ACCEPTED = `a #cloud-config YAML mapping, a #! script or a MIME multipart of ${PART_TYPES} parts`;

export function cloudInitProblems(config: CtyObject): Diagnostic[] {
  const v = config.cloud_init;
  if (v === null || v === undefined || v === UNKNOWN || String(v).trim() === "") return [];
  const why = userDataProblem(String(v));
  if (!why) return [];
  const summary = "nubes_vc_vm_v3: cloud_init is not user-data cloud-init accepts";
  return [errorDiagnostic(summary, `${why}. Give ${ACCEPTED} (vms[].cloudInit).`, "cloud_init")];
}
