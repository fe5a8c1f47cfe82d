/**
 * Cron expressions: 5-field POSIX cron only (anything croner reads beyond it is refused, naming
 * the expression), UTC by default, IANA zones with DST handled as croner does.
 */
import { describe, expect, it } from 'vitest';
import { parseCronExpression } from '../../../src/core/cron/index.js';
import { isTaqubaError, type TaqubaError } from '../../../src/core/errors.js';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();

/** The next `n` firings after `fromIso`. */
function firings(cron: string, timezone: string | undefined, fromIso: string, n: number): string[] {
  const expression = parseCronExpression(cron, timezone);
  const out: string[] = [];
  let t = at(fromIso);
  for (let i = 0; i < n; i++) {
    t = expression.nextAfter(t);
    out.push(iso(t));
  }
  return out;
}

function parseError(cron: unknown, timezone?: unknown): TaqubaError {
  try {
    parseCronExpression(cron, timezone);
  } catch (e) {
    if (isTaqubaError(e)) return e;
    throw e;
  }
  throw new Error(`expected ${String(cron)} to be refused`);
}

describe('parseCronExpression', () => {
  it('reads 5 fields in UTC by default: every minute, steps, ranges and lists, strictly after the instant', () => {
    expect(firings('* * * * *', undefined, '2025-01-01T00:00:00.000Z', 2)).toEqual(['2025-01-01T00:01:00.000Z', '2025-01-01T00:02:00.000Z']);
    expect(firings('* * * * *', undefined, '2025-01-01T00:00:59.999Z', 1)).toEqual(['2025-01-01T00:01:00.000Z']);
    expect(firings('*/15 9-10 * * 1-5', undefined, '2025-01-03T10:40:00.000Z', 3)).toEqual([
      '2025-01-03T10:45:00.000Z', // a Friday
      '2025-01-06T09:00:00.000Z', // the next Monday
      '2025-01-06T09:15:00.000Z',
    ]);
    expect(firings('0 12 1,15 * *', undefined, '2025-02-10T00:00:00.000Z', 2)).toEqual(['2025-02-15T12:00:00.000Z', '2025-03-01T12:00:00.000Z']);
    // Day-of-month and day-of-week both restricted: either matches (POSIX).
    expect(firings('0 0 13 * 5', undefined, '2025-06-01T00:00:00.000Z', 3)).toEqual(['2025-06-06T00:00:00.000Z', '2025-06-13T00:00:00.000Z', '2025-06-20T00:00:00.000Z']);
    const expression = parseCronExpression('0 3 * * *');
    expect(expression.timezone).toBe('UTC');
    expect(expression.expression).toBe('0 3 * * *');
  });

  it('refuses 6 fields (seconds) and other field counts with INVALID_ARGUMENT naming the expression', () => {
    const six = parseError('*/10 * * * * *');
    expect(six.code).toBe('INVALID_ARGUMENT');
    expect(six.details).toMatchObject({ reason: 'invalid_cron_expression', expression: '"*/10 * * * * *"', fields: '6' });
    expect(six.message).toContain('expected 5 fields');
    expect(six.message).toContain('seconds');
    expect(six.message).toContain('"*/10 * * * * *"');
    expect(parseError('* * * *').details).toMatchObject({ reason: 'invalid_cron_expression', fields: '4' });
    expect(parseError('0 0 1 1 * 2030').details).toMatchObject({ reason: 'invalid_cron_expression', fields: '6' });
    expect(parseError('').details.reason).toBe('invalid_cron_expression');
  });

  it("refuses what croner reads beyond POSIX: nicknames, L, W, #, ?, names, numeric-prefix steps", () => {
    for (const cron of ['@daily', '@hourly', '0 0 L * *', '0 0 1W * *', '0 0 * * 5#2', '0 0 ? * *', '0 0 * * MON', '0 0 1 JAN *', '0 0 * * 5L']) {
      const e = parseError(cron);
      expect(e.code, cron).toBe('INVALID_ARGUMENT');
      expect(e.details.reason, cron).toBe('invalid_cron_expression');
      expect(e.message, cron).toContain(JSON.stringify(cron));
    }
    expect(parseError('0 0 * * MON').details.field).toBe('day-of-week');
    expect(parseError('5/10 * * * *').details.reason).toBe('invalid_cron_expression');
  });

  it('refuses values out of range, expressions that never fire, and non-strings', () => {
    expect(parseError('60 * * * *').message).toMatch(/minute/);
    expect(parseError('0 24 * * *').details.reason).toBe('invalid_cron_expression');
    expect(parseError('0 0 0 * *').details.reason).toBe('invalid_cron_expression');
    expect(parseError('0 0 * 13 *').details.reason).toBe('invalid_cron_expression');
    const never = parseError('0 0 30 2 *');
    expect(never.details.reason).toBe('invalid_cron_expression');
    expect(never.message).toContain('never fires');
    expect(parseError(42).message).toContain('must be a string');
    expect(parseError(undefined).details.reason).toBe('invalid_cron_expression');
  });

  it('refuses an unknown time zone with reason invalid_timezone', () => {
    const e = parseError('* * * * *', 'Mars/Olympus_Mons');
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.details).toMatchObject({ reason: 'invalid_timezone', timezone: '"Mars/Olympus_Mons"' });
    expect(parseError('* * * * *', '').details.reason).toBe('invalid_timezone');
    expect(parseError('* * * * *', 5).details.reason).toBe('invalid_timezone');
  });

  it('reads wall time in an IANA zone: America/New_York across both DST transitions of 2025', () => {
    // 02:30 does not exist on 9 March (02:00 EST -> 03:00 EDT): that day fires at 03:00 EDT.
    expect(firings('30 2 * * *', 'America/New_York', '2025-03-07T12:00:00.000Z', 4)).toEqual([
      '2025-03-08T07:30:00.000Z', // 02:30 EST
      '2025-03-09T07:00:00.000Z', // 03:00 EDT, the first valid time after the gap
      '2025-03-10T06:30:00.000Z', // 02:30 EDT
      '2025-03-11T06:30:00.000Z',
    ]);
    // An hourly schedule skips the missing hour...
    expect(firings('0 * * * *', 'America/New_York', '2025-03-09T05:30:00.000Z', 3)).toEqual([
      '2025-03-09T06:00:00.000Z', // 01:00 EST
      '2025-03-09T07:00:00.000Z', // 03:00 EDT
      '2025-03-09T08:00:00.000Z',
    ]);
    // ...and fires on both occurrences of the repeated one (01:00 EDT, then 01:00 EST on 2 November).
    expect(firings('0 * * * *', 'America/New_York', '2025-11-02T03:30:00.000Z', 4)).toEqual([
      '2025-11-02T04:00:00.000Z', // 00:00 EDT
      '2025-11-02T05:00:00.000Z', // 01:00 EDT
      '2025-11-02T06:00:00.000Z', // 01:00 EST
      '2025-11-02T07:00:00.000Z', // 02:00 EST
    ]);
    // A fixed time in the repeated hour fires once.
    expect(firings('30 1 * * *', 'America/New_York', '2025-11-01T12:00:00.000Z', 2)).toEqual(['2025-11-02T05:30:00.000Z', '2025-11-03T06:30:00.000Z']);
  });
});
