// Terraform shows a provider's diagnostics as "Error: <summary>" with the detail below and, when an
// attribute is named, the configuration line that set it. Every failure the twin reports goes this way.

export interface Diagnostic {
  severity: 1 | 2;
  summary: string;
  detail: string;
  attribute?: { steps: { attribute_name: string }[] };
}

export function errorDiagnostic(summary: string, detail = "", attribute?: string): Diagnostic {
  return {
    severity: 1,
    summary,
    detail,
    ...(attribute ? { attribute: { steps: [{ attribute_name: attribute }] } } : {}),
  };
}

/** A failure with what a person should read: thrown by resource code, reported as one error diagnostic. */
export class TwinError extends Error {
  constructor(
    readonly summary: string,
    readonly detail = "",
    readonly attribute?: string,
  ) {
    super(detail ? `${summary}: ${detail}` : summary);
  }
}

export function toDiagnostic(e: unknown, what: string): Diagnostic {
  if (e instanceof TwinError) return errorDiagnostic(e.summary, e.detail, e.attribute);
  const err = e as Error;
  return errorDiagnostic(
    `${what} failed in the twin`,
    `${err?.message ?? String(e)} (a bug in the twin, not in the stack: see the provider's stderr with TF_LOG=debug)`,
  );
}
