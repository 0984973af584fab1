// Placeholder until the installers issue: proves bundling and the job contract.
export async function install(event: Record<string, unknown>): Promise<unknown> {
  return { status: "placeholder", handler: "install-packages", event_keys: Object.keys(event) };
}
