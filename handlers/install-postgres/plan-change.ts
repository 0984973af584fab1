// One change install-postgres' plan calls for, and a line it says: the types plan.ts and the files that
// plan parts of it (plan-access.ts, plan-joins.ts) share, apart so that none of them imports plan.ts.

import type { Change, Note } from "../common/installer-model";
import type { PostgresOutcome } from "./apply";
import type { PostgresEvent } from "./decisions";
import type { Run } from "./run";
import type { SqlFirst } from "./sql-first";

/** One change the plan calls for; `what`: its lines in `changes` (a check's `would_change`). */
export interface PostgresChange extends Change<PostgresEvent, PostgresOutcome> {
  readonly kind:
    | "server-package"
    | "pgdg-keyring"
    | "cluster-create"
    | "cluster-start"
    | "role-database"
    | "revoke-login"
    | "configuration"
    | "restart"
    | "reload"
    | "inventory"
    | "extension-package"
    | "extensions"
    | "tls";
  /** The grants it takes back, one line each (the result's `revoked`). */
  readonly revoked?: readonly string[];
  /**
   * How it shares one exec with its neighbour (plan-joins.ts): `sql`, the SQL it runs, given to the change
   * right after it; `after`, its apply with a previous change's SQL run first in the same exec.
   */
  readonly joined?: {
    sql?(run: Run): SqlFirst;
    after?(run: Run, first: SqlFirst): Promise<PostgresOutcome | undefined>;
  };
  /**
   * Lines only a check says, beside this change (plan-preview.ts): predictions past it, or what could not be
   * seen before it is made. A run looks again after it and says what it then finds instead.
   */
  readonly foreseen?: readonly Note[];
}

/** A line the plan says in the progress (and, for a warning, in the result), a check and a run alike. */
export interface Said {
  line: string;
  warning?: boolean;
}
