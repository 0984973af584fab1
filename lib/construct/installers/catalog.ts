// The installers, in the order they run on one VM (packages -> docker -> postgres: two apt runs on one
// host only fight over the dpkg lock). Each is declared once in handlers/<handler>/definition.ts; adding
// one is its folder plus one line here (docs/adding-an-installer.md).
import { dockerDefinition } from "../../../handlers/install-docker/definition";
import { packagesDefinition } from "../../../handlers/install-packages/definition";
import { postgresDefinition } from "../../../handlers/install-postgres/definition";
import type { InstallerDefinition } from "../../shared/installer-definition";

/** An installer as the stack runs it. */
export interface CatalogEntry extends InstallerDefinition {
  /** Folder that holds `<handler>/handler.ts`. @default the project's handlers/ */
  readonly handlersDir?: string;
}

/** The built-in installers under their cdktf.json keys, in run order; their config types derive from it. */
export const BUILT_IN_INSTALLERS = {
  packages: packagesDefinition,
  docker: dockerDefinition,
  postgres: postgresDefinition,
} as const;

/** Catalog order is run order on a VM. */
export const INSTALLERS: readonly CatalogEntry[] = Object.values(BUILT_IN_INSTALLERS);
