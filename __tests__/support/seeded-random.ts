// Random input for property tests that a failing seed replays exactly.

/** A deterministic generator (mulberry32): numbers in [0, 1), the same sequence for the same seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Choices drawn from one seeded sequence, so a generated state is the seed's alone. */
export class Draw {
  private readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = rng(seed);
  }
  /** True with probability `p`. */
  chance(p = 0.5): boolean {
    return this.next() < p;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  /** Each item kept with probability `p`, in order; at least `min` of them. */
  subset<T>(items: readonly T[], p = 0.5, min = 0): T[] {
    const kept = new Set(items.filter(() => this.chance(p)));
    while (kept.size < Math.min(min, items.length)) kept.add(this.pick(items));
    return items.filter((i) => kept.has(i));
  }
}

/**
 * The seeds of a property test's cases: PROPERTY_SEED (default `fallback`) is the first, each next one
 * derived from it; PROPERTY_CASES (default `count`) how many. A failing case's seed, given as PROPERTY_SEED
 * with PROPERTY_CASES=1, replays that case alone.
 */
export function propertySeeds(fallback: number, count: number): { seed: number; seeds: number[] } {
  const seed = Number(process.env.PROPERTY_SEED ?? fallback) >>> 0;
  const n = Number(process.env.PROPERTY_CASES ?? count);
  const seeds = Array.from({ length: n }, (_, i) => (seed + Math.imul(i, 0x9e3779b9)) >>> 0);
  return { seed, seeds };
}
