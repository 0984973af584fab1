// Placeholder until the install-docker/install-postgres issue lands: proves bundling and the job contract.
export async function install(event: Record<string, unknown>): Promise<unknown> {
  throw new Error("install-postgres is not implemented yet (event keys: " + Object.keys(event).join(", ") + ")");
}
