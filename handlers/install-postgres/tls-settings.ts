// install-postgres' TLS settings, declared apart so the server certificate's part of the definition reads
// as one: where the certificate comes from (the stack's CA or the user), which names it covers, when it is
// renewed. The CA key and a given key are secrets: never quoted by a rule, scrubbed from every message.
import { hostAddress } from "../../lib/shared/names";
import { setting } from "../../lib/shared/settings";
import { integer, list, oneOf, string, type Validator, withSchema } from "../../lib/shared/validate";

const TLS_MODES = ["debian", "stack-ca", "given"] as const;

const PEM_MAX = 65_536;

const variableName = string({
  pattern: /^[a-z][a-z0-9_]{0,63}$/,
  allowed: "a Terraform variable name (lowercase, digits, _), set as TF_VAR_<name>",
});

/** The event fields the stack's CA reaches the jobs in, each the property of the stack's CA file holding it. */
const STACK_CA_FIELDS = { tls_ca_cert: "cert", tls_ca_key: "key" } as const;

/** PEM text of `kind` ("" for none): its value is never quoted, as a key is a secret. */
function pem(kind: "CERTIFICATE" | "PRIVATE KEY"): Validator<string> {
  return withSchema(
    (value, path, problems) => {
      if (typeof value !== "string") {
        problems.push(`${path}: expected PEM text (${kind}), got ${value === null ? "null" : typeof value}`);
        return "";
      }
      if (value.length > PEM_MAX) problems.push(`${path}: is ${value.length} characters long; at most ${PEM_MAX}`);
      else if (value !== "" && !new RegExp(`-----BEGIN [A-Z ]*${kind}-----`).test(value))
        problems.push(`${path}: is not PEM text holding a ${kind} (the value is not shown)`);
      return value;
    },
    { type: "string", maxLength: PEM_MAX },
  );
}

export const TLS_SETTINGS = {
  tls: setting(oneOf(TLS_MODES), {
    event: "tls",
    default: "debian",
    doc:
      'The server certificate: "debian" leaves the cluster\'s own (snakeoil: clients can only use ' +
      'sslmode=require); "stack-ca" issues one for the VM\'s address, listenAddresses and tlsNames from the CA ' +
      "the stack makes (its certificate is the stack's output postgres_ca_cert: sslmode=verify-full); " +
      '"given" installs the certificate and key of tlsCertVariable and tlsKeyVariable.',
  }),
  tlsNames: setting(list(hostAddress, { unique: true }), {
    event: "tls_names",
    default: [],
    doc:
      "Names and addresses clients connect to, besides the VM's address and listenAddresses (the VM's own host " +
      'names are not taken from it: list them here): "stack-ca" issues for them too; a "given" certificate that ' +
      "does not name one is refused.",
  }),
  tlsRenewDays: setting(integer(1, 3650), {
    event: "tls_renew_days",
    default: 30,
    doc: 'A certificate that expires within this many days is replaced on the next run ("stack-ca").',
  }),
  tlsValidDays: setting(integer(2, 3650), {
    event: "tls_valid_days",
    default: 365,
    doc: 'How long a certificate the stack\'s CA issues is valid, in days; more than tlsRenewDays ("stack-ca").',
  }),
  tlsCaCert: setting(pem("CERTIFICATE"), {
    event: "tls_ca_cert",
    eventOnly: true,
    default: "",
    doc: "The stack's CA certificate (PEM), from its CA file (stack-ca).",
  }),
  tlsCaKey: setting(pem("PRIVATE KEY"), {
    event: "tls_ca_key",
    eventOnly: true,
    default: "",
    doc: "The stack's CA key (PEM, a secret), from its CA file (stack-ca).",
  }),
  tlsCertVariable: setting(variableName, {
    defaultDoc: 'none; required with tls "given"',
    doc:
      'Terraform variable holding the certificate for tls "given" (PEM: the server\'s, then its chain), set ' +
      'as TF_VAR_<name>, e.g. TF_VAR_pg_tls_cert="$(cat server.crt)"; the job gets it as tls_cert.',
  }),
  tlsCert: setting(pem("CERTIFICATE"), {
    event: "tls_cert",
    eventOnly: true,
    default: "",
    doc: "The given certificate (PEM), from tlsCertVariable.",
  }),
  tlsKeyVariable: setting(variableName, {
    defaultDoc: 'none; required with tls "given"',
    doc: 'Terraform variable holding the key for tls "given" (PEM), set as TF_VAR_<name>; the job gets it as tls_key.',
  }),
  tlsKey: setting(pem("PRIVATE KEY"), {
    event: "tls_key",
    eventOnly: true,
    default: "",
    doc: "The given key (PEM, a secret), from tlsKeyVariable.",
  }),
};

/** The secret event fields tls "given" asks for, each from its Terraform variable (conditionalSecrets). */
export function tlsSecretVariables(c: Record<string, unknown>): Record<string, string> {
  if (c.tls !== "given") return {};
  return {
    ...(c.tlsCertVariable ? { tls_cert: String(c.tlsCertVariable) } : {}),
    ...(c.tlsKeyVariable ? { tls_key: String(c.tlsKeyVariable) } : {}),
  };
}

/** The secret event fields tls "stack-ca" asks for, each from the stack's CA file (stackCaSecrets). */
export function tlsStackCaFields(c: Record<string, unknown>): Record<string, "cert" | "key"> {
  return c.tls === "stack-ca" ? { ...STACK_CA_FIELDS } : {};
}

/** The tls settings' contradictions at synth, in the settings' words. */
export function tlsConfigProblems(c: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (c.tls === "given" && (!c.tlsCertVariable || !c.tlsKeyVariable))
    problems.push(
      'tlsCertVariable, tlsKeyVariable: required with tls "given"; name the Terraform variables holding the ' +
        "certificate and its key (set as TF_VAR_<name>)",
    );
  if (Number(c.tlsValidDays) <= Number(c.tlsRenewDays))
    problems.push(
      `tlsValidDays: ${c.tlsValidDays} is not more than tlsRenewDays (${c.tlsRenewDays}); every run would replace ` +
        "the certificate: make it longer",
    );
  return problems;
}
