// Debian version order, as dpkg has it (lib/dpkg/version.c: epoch, then upstream and revision compared
// fragment by fragment, letters before other characters, "~" before everything, even the end).

function order(c: string): number {
  if (c === "~") return -1;
  if (/[0-9]/.test(c)) return 0;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  return c ? c.charCodeAt(0) + 256 : 0;
}

function compareFragment(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let diff = 0;
    while ((i < a.length && !/[0-9]/.test(a[i])) || (j < b.length && !/[0-9]/.test(b[j]))) {
      const ac = order(a[i] ?? "");
      const bc = order(b[j] ?? "");
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (a[i] === "0") i++;
    while (b[j] === "0") j++;
    while (i < a.length && /[0-9]/.test(a[i]) && j < b.length && /[0-9]/.test(b[j])) {
      if (!diff) diff = a.charCodeAt(i) - b.charCodeAt(j);
      i++;
      j++;
    }
    if (i < a.length && /[0-9]/.test(a[i])) return 1;
    if (j < b.length && /[0-9]/.test(b[j])) return -1;
    if (diff) return diff;
  }
  return 0;
}

/** <0, 0, >0 as Debian version a sorts before, with or after b. */
export function compareDebianVersions(a: string, b: string): number {
  const split = (v: string) => {
    const colon = v.indexOf(":");
    const epoch = colon > 0 ? Number(v.slice(0, colon)) : 0;
    const rest = colon > 0 ? v.slice(colon + 1) : v;
    const dash = rest.lastIndexOf("-");
    return { epoch, upstream: dash >= 0 ? rest.slice(0, dash) : rest, revision: dash >= 0 ? rest.slice(dash + 1) : "" };
  };
  const x = split(a);
  const y = split(b);
  return x.epoch - y.epoch || compareFragment(x.upstream, y.upstream) || compareFragment(x.revision, y.revision);
}
