// What every step of install-postgres works with: the kit's context with install-postgres' event.

import type { InstallerContext } from "../common/installer-model";
import type { PostgresEvent } from "./decisions";

export type Run = InstallerContext<PostgresEvent>;
