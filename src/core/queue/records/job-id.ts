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

export class JobIdGenerator {
  private lastTime = -1;
  private readonly rand = new Uint8Array(10);

  constructor(
    private readonly clock: Clock,
    private readonly random: (bytes: Uint8Array) => void,
  ) {}

  next(): string {
    const now = Math.floor(this.clock.now());
    if (now > this.lastTime) {
      this.lastTime = now;
      this.random(this.rand);
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
