/**
 * Where a finished phase is kept: its value and cost as one caller-KV entry of the batch
 * (`phases/<item>/<phase>`), durable before the next phase starts. A KV put joins the engine's
 * group commit with the other items' puts and acknowledgements, where an object per phase would
 * cost its own durable file write. A value too large for a KV entry goes to the item's step memo
 * (an object), and the KV entry then only says so. An entry that does not decode is treated as
 * absent (the phase runs again and overwrites it), like the memo does.
 *
 * The last phase is not stored here: its value and cost are the item's marker, which commits
 * with the item's acknowledgement. A separate write would hold the item's slot for one more
 * durable commit (halving the throughput of short phases) and would only narrow the window in
 * which a crash reruns the last phase by that commit.
 */
import { decodeRecord, decodeValue, encodeRecord, encodeValue } from '../codec.js';
import { MAX_KV_VALUE_SIZE } from '../queue/index.js';
import { withSlotLent, type HandlerSlot } from '../queue/workers/handler-slots.js';
import type { Memo } from '../workflow/steps/memo.js';
import { isCostReport, type CostReport } from './cost.js';

export interface PhaseRecord {
  readonly value: unknown;
  readonly cost: CostReport;
}

/** The caller-KV writes and committed reads the phase memo needs. */
export interface PhaseKv {
  get(key: Uint8Array): Promise<Uint8Array | null>;
  put(key: Uint8Array, value: Uint8Array): Promise<void>;
}

export const phaseMemoKey = (phase: string): string => `bulk.phase:${phase}`;

// Room for the record's own fields around the value.
const KV_ROOM = MAX_KV_VALUE_SIZE - 1024;
/** The KV entry of a phase whose record is in the step memo. */
const IN_MEMO = encodeRecord({ m: 1 });

function decodePhase(bytes: Uint8Array): PhaseRecord | 'in-memo' | undefined {
  try {
    const r = decodeRecord(bytes) as { v?: unknown; c?: unknown; m?: unknown } | null;
    if (typeof r === 'object' && r !== null && r.m === 1) return 'in-memo';
    if (typeof r === 'object' && r !== null && r.v instanceof Uint8Array && isCostReport(r.c)) return { value: decodeValue(r.v), cost: r.c };
  } catch {
    // treated as absent
  }
  return undefined;
}

async function readPhase(kv: PhaseKv, key: Uint8Array, memo: Memo, phase: string, warn: (m: string) => void): Promise<PhaseRecord | undefined> {
  const stored = await kv.get(key);
  if (stored === null) return undefined;
  let hit = decodePhase(stored);
  if (hit === 'in-memo') {
    const big = await memo.get(phaseMemoKey(phase));
    hit = big === null ? undefined : decodePhase(big);
    if (hit === 'in-memo') hit = undefined;
    if (big === null) return undefined; // swept or never completed: run it again
  }
  if (hit === undefined) warn(`stored phase does not decode; running it again. runId=${memo.runId} phase=${phase}`);
  return hit;
}

/**
 * The stored phase, or `compute`'s result stored first (not for the `last` phase, see above).
 * `encodeValue` rejects an unstorable value with INVALID_ARGUMENT (reason `serialization`)
 * before anything is stored. While the record syncs, the item's worker `slot` (if any) runs
 * another item.
 */
export async function memoizedPhase(
  kv: PhaseKv,
  key: Uint8Array,
  memo: Memo,
  phase: string,
  last: boolean,
  warn: (m: string) => void,
  slot: HandlerSlot | undefined,
  compute: () => Promise<PhaseRecord>,
): Promise<PhaseRecord> {
  if (!last) {
    const hit = await readPhase(kv, key, memo, phase, warn);
    if (hit) return hit;
  }
  const record = await compute();
  if (last) return record;
  const bytes = encodeRecord({ v: encodeValue(record.value), c: record.cost });
  await withSlotLent(slot, async () => {
    if (bytes.length > KV_ROOM) {
      await memo.put(phaseMemoKey(phase), bytes);
      await kv.put(key, IN_MEMO);
    } else {
      await kv.put(key, bytes);
    }
  });
  return record;
}
