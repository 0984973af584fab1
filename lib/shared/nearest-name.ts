// The allowed name a mistyped key most likely meant, for the "did you mean" of an unknown-key message: a
// list of 25 allowed names is no help when the one meant differs by a letter (allowedCidr, allowedCidrs).
// Bundled into every job (the handlers check their events with the same messages), so no library.

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`, ignoring case. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d = Array.from({ length: s.length + 1 }, (_, i) => [i, ...new Array<number>(t.length).fill(0)]);
  for (let j = 1; j <= t.length; j++) d[0][j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[s.length][t.length];
}

/**
 * The candidate closest to `word`, when close enough to be a slip rather than another word: at most a
 * third of the longer name's letters differ (at least one may), or `word` is spelled in another case or
 * with _ for a camelCase name (budget_sec for budgetSec). The first of equally close candidates wins.
 */
export function nearestName(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(word.replace(/[_-]/g, ""), name.replace(/[_-]/g, ""));
    const limit = Math.max(1, Math.floor(Math.max(word.length, name.length) / 3));
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}
