// docker.service's journal as install-docker's daemon.json step reads it: a cursor taken before the write
// (with the file's bytes, in one look), then only what dockerd logged after it.
import type { Step } from "./scripted-remote";

export const CURSOR = "s=5f1e0c;i=2a1;b=9c0d;m=1e84;t=62f1a0;x=77ab";

/** The one look before daemon.json is written: the file's exact bytes (`text`) and the journal's cursor. */
export const beforeWrite = (text: string): Step => ({
  match: "journalctl -u docker.service -n 1 -o export --no-pager",
  sudo: true,
  facts: { "daemon_json.root": text, "docker.journal_cursor": `${CURSOR}\n` },
});
