import { createSeededRandom } from '../../src/testing/faulty-store.js';

/** Seeded PRNG so random tests are reproducible from their seed. */
export const seededRandom = createSeededRandom;

export function randomInt(rand: () => number, below: number): number {
  return Math.floor(rand() * below);
}
