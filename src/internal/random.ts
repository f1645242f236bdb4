/**
 * mulberry32, a small seeded PRNG: the same seed gives the same sequence on every run and
 * machine, so demo traffic, synthetic exports, benchmarks and randomized tests can be replayed.
 * Fixtures and benchmark figures derive from these exact sequences: never change the algorithm
 * or its seeding.
 */

/** Unsigned 32-bit integers. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Floats in [0, 1), like `Math.random`. */
export function seededRandom(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}

/** Integers in [0, n). */
export function seededRandomInt(seed: number): (n: number) => number {
  const next = seededRandom(seed);
  return (n) => Math.floor(next() * n);
}
