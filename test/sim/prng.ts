/**
 * The simulator's only source of randomness: a small seeded generator (mulberry32) and a way to
 * derive independent streams from one seed. Each simulation step and each store operation draws
 * from its own derived stream, so dropping one action while shrinking does not shift the random
 * choices of every later step.
 */

/** Mixes integers into one 32-bit seed (splitmix-style finalizer over each part). */
export function deriveSeed(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A small label hash, so streams can be named ('config', 'final', ...). */
export function labelHash(label: string): number {
  let h = 2166136261;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619) >>> 0;
  return h;
}

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A new independent stream named by `parts` (the parent's state is not advanced). */
  static of(...parts: readonly number[]): Prng {
    return new Prng(deriveSeed(...parts));
  }

  u32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.float() * items.length)]!;
  }

  /** Picks by weight; entries with weight 0 are never picked. Undefined when all weights are 0. */
  weighted<T>(entries: readonly (readonly [T, number])[]): T | undefined {
    let total = 0;
    for (const [, w] of entries) total += w;
    if (total <= 0) return undefined;
    let r = this.float() * total;
    for (const [item, w] of entries) {
      if (w <= 0) continue;
      r -= w;
      if (r < 0) return item;
    }
    return entries.filter(([, w]) => w > 0).at(-1)![0];
  }

  /** Fills `bytes` (for the patched crypto.getRandomValues). */
  fill(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i += 4) {
      const v = this.u32();
      for (let j = 0; j < 4 && i + j < bytes.length; j++) bytes[i + j] = (v >>> (8 * j)) & 0xff;
    }
  }
}
