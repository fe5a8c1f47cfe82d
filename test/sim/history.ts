/**
 * What the simulated clients were told: every commit (its writes, durable or not) with its
 * outcome, every flush and clean close that made earlier commits durable, and each writer's
 * epoch. The checker turns this into bounds on how much of each writer's history must, and may,
 * be in the store.
 *
 * Outcomes, as docs/rfcs/0001-kv-engine.md ("Outcomes") defines them:
 *  - acknowledged: resolved and durable (or a later flush / durable commit / clean close of the
 *    same writer resolved): must be in the history;
 *  - FENCED, CLOSED: not applied (nor anything the writer commits after);
 *  - CONFLICT, INVALID_ARGUMENT: never took a sequence number: not part of the history at all;
 *  - anything else, or no answer (the writer crashed): unknown.
 */

export type Outcome = { readonly kind: 'pending' } | { readonly kind: 'ok' } | { readonly kind: 'rejected'; readonly code: string; readonly message: string };

export interface CommitRecord {
  readonly id: number;
  readonly writer: number;
  /** key -> value, null for a delete. */
  readonly ops: ReadonlyMap<string, string | null>;
  readonly durable: boolean;
  readonly step: number;
  outcome: Outcome;
  /** A flush, a later durable acknowledgement or a clean close of its writer covered it. */
  covered: boolean;
}

export interface WriterRecord {
  readonly index: number;
  readonly name: string;
  epoch?: number;
  readonly commits: CommitRecord[];
}

export const NOT_APPLIED = new Set(['FENCED', 'CLOSED']);
export const NO_SEQUENCE = new Set(['CONFLICT', 'INVALID_ARGUMENT']);

export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : `non-library error (${(error as Error)?.name ?? typeof error})`;
}

export function rejected(error: unknown): Outcome {
  return { kind: 'rejected', code: codeOf(error), message: String((error as Error)?.message ?? error).slice(0, 200) };
}

export function describeOutcome(o: Outcome): string {
  return o.kind === 'rejected' ? o.code : o.kind;
}

/** The commits of a writer that took part in its history (in seq order = issue order). */
export function sequenced(writer: WriterRecord): CommitRecord[] {
  return writer.commits.filter((c) => !(c.outcome.kind === 'rejected' && NO_SEQUENCE.has(c.outcome.code)));
}

export function isAcknowledged(c: CommitRecord): boolean {
  return c.covered || (c.durable && c.outcome.kind === 'ok');
}

export function isNotApplied(c: CommitRecord): boolean {
  return c.outcome.kind === 'rejected' && NOT_APPLIED.has(c.outcome.code);
}

/** A durable acknowledgement covers every earlier commit of the same writer (WAL order). */
export function coverUpTo(writer: WriterRecord, commitsIssuedBefore: number): void {
  for (let i = 0; i < commitsIssuedBefore && i < writer.commits.length; i++) writer.commits[i]!.covered = true;
}

/** Renders a commit for traces and failure messages. */
export function describeCommit(c: CommitRecord, writerName: string): string {
  const ops = [...c.ops].map(([k, v]) => (v === null ? `del ${k}` : `${k}=${v.length > 14 ? `${v.slice(0, 10)}..(${v.length}B)` : v}`));
  return `c${c.id} (${writerName}, ${c.durable ? 'durable' : 'non-durable'}, ${describeOutcome(c.outcome)}${c.covered ? ', covered' : ''}) {${ops.join(', ')}}`;
}

/**
 * After damage, the answers that count as the engine reporting it: CORRUPT_DATA, or NOT_FOUND for
 * an object the engine's own state says must exist (a table named by the manifest).
 */
export function reportsDamage(error: unknown): boolean {
  const code = codeOf(error);
  return code === 'CORRUPT_DATA' || (code === 'NOT_FOUND' && /missing/.test(String((error as Error)?.message)));
}
