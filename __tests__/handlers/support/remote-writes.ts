// Remote writes (handlers/common/remote-file.ts) read back for the doubles: the files a command writes, in order,
// each from its byte count of stdin, and the text a step matches a write of one path by.
import { quote } from "../../../lib/shared/shell-quote";

/** What a step matches a write of `path` by: the rename every remote write ends with. */
export const renameOf = (path: string) => `mv -fT "$t" ${quote(path)}`;

const WRITE = /head -c (\d+) > "\$t" .*?mv -fT "\$t" ('[^']*'|[^ ;}]+)/g;

/** The files `command` writes, in order, each with its bytes of `stdin` (taken in turn). */
export function writtenBytes(command: string, stdin: string | Buffer): { path: string; bytes: Buffer }[] {
  const all = Buffer.from(stdin);
  let at = 0;
  return [...command.matchAll(WRITE)].map((m) => {
    const n = Number(m[1]);
    const bytes = all.subarray(at, at + n);
    at += n;
    return { path: m[2].replace(/^'|'$/g, ""), bytes };
  });
}

/** writtenBytes, each file's bytes as UTF-8 text. */
export function writtenFiles(command: string, stdin: string | Buffer): { path: string; content: string }[] {
  return writtenBytes(command, stdin).map(({ path, bytes }) => ({ path, content: bytes.toString() }));
}
