/**
 * Monotonic ULIDs: 48-bit millisecond time + 80 random bits, 26 Crockford base32 characters that
 * sort in generation order. Within one millisecond, or when the clock stalls or steps back, the
 * generator keeps its previous time and increments the random part, so ids strictly increase in
 * call order for the life of the generator.
 */
import type { Clock } from '../../clock.js';
import { InternalError } from '../../errors.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Random parts drawn from the source at once: one call per 16 new milliseconds, not one each. */
const POOLED_PARTS = 16;

export class JobIdGenerator {
  private lastTime = -1;
  private readonly rand = new Uint8Array(10);
  /**
   * Random bytes drawn ahead. A sequential caller starts a new millisecond at nearly every id,
   * and `crypto.getRandomValues` costs more per call than per byte (about 3% of a lone run's CPU).
   */
  private readonly pool = new Uint8Array(POOLED_PARTS * 10);
  private pooled = 0;

  constructor(
    private readonly clock: Clock,
    private readonly random: (bytes: Uint8Array) => void,
  ) {}

  next(): string {
    const now = Math.floor(this.clock.now());
    if (now > this.lastTime) {
      this.lastTime = now;
      if (this.pooled === 0) {
        this.random(this.pool);
        this.pooled = POOLED_PARTS;
      }
      this.pooled--;
      this.rand.set(this.pool.subarray(this.pooled * 10, this.pooled * 10 + 10));
    } else {
      this.increment();
    }
    return encodeTime(this.lastTime) + encodeRandom(this.rand);
  }

  private increment(): void {
    for (let i = this.rand.length - 1; i >= 0; i--) {
      if (this.rand[i] !== 0xff) {
        this.rand[i]++;
        return;
      }
      this.rand[i] = 0;
    }
    // 2^80 ids in one millisecond: move to the next millisecond rather than wrap.
    this.lastTime++;
  }
}

function encodeTime(ms: number): string {
  if (ms > 2 ** 48 - 1) throw new InternalError(`clock beyond the ULID time range. now=${ms}`);
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** 80 bits as 16 base32 characters, most significant first. */
function encodeRandom(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** True when `id` has the shape of a ULID. */
export function isUlid(id: string): boolean {
  return ULID_PATTERN.test(id);
}

/** The millisecond timestamp encoded in a ULID. */
export function ulidTime(id: string): number {
  let t = 0;
  for (let i = 0; i < 10; i++) t = t * 32 + ALPHABET.indexOf(id[i]);
  return t;
}
