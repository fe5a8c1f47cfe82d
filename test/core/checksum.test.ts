import { describe, expect, it } from 'vitest';
import { crc32c } from '../../src/core/checksum.js';

describe('crc32c', () => {
  // Check values from RFC 3720 (iSCSI) appendix B.4 and the common "123456789" check.
  it('matches the published check values', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('checksums exactly the range [start, end), at every alignment', () => {
    const bytes = Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 0xff);
    for (let start = 0; start <= 20; start++) {
      for (let end = start; end <= bytes.length; end += 3) {
        expect(crc32c(bytes, start, end)).toBe(crc32c(bytes.slice(start, end)));
      }
    }
    // A range differs from the whole when the excluded bytes matter.
    expect(crc32c(bytes, 1)).not.toBe(crc32c(bytes));
  });
});
