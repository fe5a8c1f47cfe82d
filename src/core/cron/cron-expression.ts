/**
 * Cron expressions: 5-field POSIX cron (minute hour day-of-month month day-of-week), evaluated by
 * `croner` in UTC or an IANA time zone. Each field is `*`, a number or a range (`a-b`), optionally
 * stepped (`*\/n`, `a-b/n`), or a comma list of those; day-of-month and day-of-week both
 * restricted match either (POSIX). Anything croner reads beyond that is refused, so an
 * expression means the same here as in crontab: seconds (6 fields), years, `@daily` nicknames,
 * `L`, `W`, `#`, `?` and month or weekday names.
 *
 * Time zones (croner's rules): a fixed-time firing in a DST gap (`30 2 * * *` on the spring-forward
 * day) fires at the first valid time after the gap, and once on a repeated hour; a wildcard or
 * stepped hour fires at every valid wall time, so an hourly schedule skips the missing hour and
 * fires on both occurrences of the repeated one.
 */
import { Cron } from 'croner';
import { InvalidArgumentError } from '../errors.js';
import { show } from '../show.js';

/** The zone of a schedule without `timezone`, as the reference does. */
export const DEFAULT_TIMEZONE = 'UTC';

const FIELD_NAMES = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
/** One element of a field's comma list: `*`, `n` or `a-b`, with an optional `/step`. */
const FIELD_ELEMENT = /^(\*|\d+(-\d+)?)(\/\d+)?$/;

/** A parsed expression: its next firing after any instant. */
export interface CronExpression {
  /** The expression with single spaces between its fields. */
  readonly expression: string;
  readonly timezone: string;
  /** The first firing strictly after `afterMs` (epoch ms, whole minutes). */
  nextAfter(afterMs: number): number;
}

function invalidExpression(expression: unknown, rule: string, extra: Record<string, string> = {}): InvalidArgumentError {
  return new InvalidArgumentError(`invalid cron expression: ${rule}. expression=${show(expression)}`, {
    reason: 'invalid_cron_expression',
    expression: show(expression),
    ...extra,
  });
}

/** Throws INVALID_ARGUMENT (reason `invalid_timezone`) unless `timezone` is an IANA zone this platform knows. */
export function checkTimezone(timezone: unknown): asserts timezone is string {
  let known = typeof timezone === 'string' && timezone.length > 0;
  if (known) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: timezone as string });
    } catch {
      known = false;
    }
  }
  if (!known) {
    throw new InvalidArgumentError(`timezone must be an IANA time zone name such as "Europe/Paris" or "UTC". timezone=${show(timezone)}`, {
      reason: 'invalid_timezone',
      timezone: show(timezone),
    });
  }
}

/** The POSIX shape check: 5 fields of digits, `*`, `,`, `-` and `/` only. */
function checkPosixFields(expression: string): void {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    const hint = fields.length === 6 ? ' (a seconds field is not POSIX cron)' : '';
    throw invalidExpression(expression, `expected 5 fields (minute hour day-of-month month day-of-week), got ${fields.length}${hint}`, { fields: String(fields.length) });
  }
  fields.forEach((field, i) => {
    for (const element of field.split(',')) {
      if (!FIELD_ELEMENT.test(element)) {
        throw invalidExpression(expression, `${FIELD_NAMES[i]} field ${JSON.stringify(field)} is not POSIX cron (only numbers, *, ranges a-b, steps /n and comma lists)`, { field: FIELD_NAMES[i]! });
      }
    }
  });
}

/**
 * Parses `expression` for `timezone` (default UTC). Throws INVALID_ARGUMENT with reason
 * `invalid_cron_expression` (not 5 POSIX fields, a value out of range, an expression that never
 * fires, like `0 0 30 2 *`) or `invalid_timezone`.
 */
export function parseCronExpression(expression: unknown, timezone: unknown = DEFAULT_TIMEZONE): CronExpression {
  if (typeof expression !== 'string') throw invalidExpression(expression, 'must be a string');
  checkPosixFields(expression);
  checkTimezone(timezone);
  // One space between fields: the stored form, compared when a schedule is defined again.
  const normalized = expression.trim().split(/\s+/).join(' ');
  let cron: Cron;
  try {
    cron = new Cron(normalized, { mode: '5-part', timezone });
  } catch (e) {
    throw invalidExpression(expression, e instanceof Error ? e.message.replace(/^CronPattern: /, '') : String(e));
  }
  const nextAfter = (afterMs: number): number | undefined => cron.nextRun(new Date(afterMs))?.getTime();
  // croner answers null when it finds no match (an impossible date): such a schedule never fires.
  if (nextAfter(0) === undefined) throw invalidExpression(expression, 'it never fires (no date matches)');
  return {
    expression: normalized,
    timezone,
    nextAfter(afterMs) {
      const next = nextAfter(afterMs);
      // Checked above: a cron expression that matches once matches in every later year range croner searches.
      if (next === undefined) throw invalidExpression(expression, `no firing after ${new Date(afterMs).toISOString()}`);
      return next;
    },
  };
}
