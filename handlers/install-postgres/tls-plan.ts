// The server certificate as a planned change of install-postgres: issued or installed (tls "stack-ca" or
// "given", decided by tls.ts) or removed (tls "debian" after them, tls-debian.ts), from what inspect read, so
// a check says "server certificate replaced (expires ...)" in the words a run reports; a cluster not yet
// made is predicted to need both the certificate and the drop-in.
import type { Change } from "../common/installer-model";
import type { PostgresOutcome } from "./apply";
import type { PostgresEvent } from "./decisions";
import type { Cluster, ServerState } from "./pg";
import { decideTls, type TlsSeen, tlsFiles } from "./tls";
import { decideDebianTls } from "./tls-debian";
import { applyTls, removeTls } from "./tls-remote";

/** The change plan.ts adds (one of its kinds), and the lines it says. */
interface TlsChange extends Change<PostgresEvent, PostgresOutcome> {
  readonly kind: "tls";
}
type TlsSaid = { line: string; warning?: boolean };

export function planTls(
  event: PostgresEvent,
  cluster: Cluster,
  state: ServerState,
  seen: TlsSeen | undefined,
): { changes: TlsChange[]; said: TlsSaid[] } {
  if (event.tls === "debian") return planDebian(event, cluster, state, seen);
  if (!seen) {
    const f = tlsFiles(state.config_file);
    return {
      changes: [
        {
          kind: "tls",
          what: [
            `server certificate (tls "${event.tls}") written to ${f.cert}, ` +
              `ssl_cert_file and ssl_key_file in ${f.dropIn}`,
          ],
          why: "no cluster to read a certificate from yet",
          apply: async () => undefined,
        },
      ],
      said: [],
    };
  }
  const d = decideTls(event, seen, state.config_file);
  const said: TlsSaid[] = d.warnings.map((line) => ({ line, warning: true }));
  if (!d.lines.length)
    return { changes: [], said: [{ line: `server certificate for ${d.names.join(", ")} is as wanted` }, ...said] };
  const change: TlsChange = {
    kind: "tls",
    what: d.lines,
    why: "the server certificate or its drop-in differs from the settings",
    apply: async (run): Promise<PostgresOutcome | undefined> => {
      await applyTls(run, cluster, state.config_file, d);
      return undefined;
    },
  };
  return { changes: [change], said };
}

/** tls "debian": vm-install's drop-in, certificate and key left from "stack-ca" or "given" are removed. */
function planDebian(
  event: PostgresEvent,
  cluster: Cluster,
  state: ServerState,
  seen: TlsSeen | undefined,
): { changes: TlsChange[]; said: TlsSaid[] } {
  const d = seen && decideDebianTls(event, seen, tlsFiles(state.config_file));
  if (!d) return { changes: [], said: [] };
  const said = d.warnings.map((line) => ({ line, warning: true }));
  if (!d.remove.length) return { changes: [], said };
  const change: TlsChange = {
    kind: "tls",
    what: d.lines,
    why: 'tls is "debian" and vm-install\'s server certificate is still there',
    apply: async (run) => {
      await removeTls(run, cluster, state.config_file, d);
      return undefined;
    },
  };
  return { changes: [change], said };
}
