/**
 * Where a finished phase is kept: its value and cost as one caller-KV entry of the batch
 * (`phases/<item>/<phase>`), durable before the next phase starts. A KV put joins the engine's
 * group commit with the other items' puts and acknowledgements, where an object per phase would
 * cost its own durable file write. A value too large for a KV entry goes to the item's step memo
 * (an object) instead; a read looks in both. An entry that does not decode is treated as absent
 * (the phase runs again and overwrites it), like the memo does.
 */
import { decodeRecord, decodeValue, encodeRecord, encodeValue } from '../../codec.js';
import { MAX_KV_VALUE_SIZE } from '../../queue/index.js';
import type { Memo } from '../memo.js';
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

function decodePhase(bytes: Uint8Array): PhaseRecord | undefined {
  try {
    const r = decodeRecord(bytes) as { v?: unknown; c?: unknown } | null;
    if (typeof r === 'object' && r !== null && r.v instanceof Uint8Array && isCostReport(r.c)) return { value: decodeValue(r.v), cost: r.c };
  } catch {
    // treated as absent
  }
  return undefined;
}

/**
 * The stored phase, or `compute`'s result stored first. `encodeValue` rejects an unstorable
 * value with INVALID_ARGUMENT (reason `serialization`) before anything is stored.
 */
export async function memoizedPhase(kv: PhaseKv, key: Uint8Array, memo: Memo, phase: string, warn: (m: string) => void, compute: () => Promise<PhaseRecord>): Promise<PhaseRecord> {
  for (const stored of [await kv.get(key), await memo.get(phaseMemoKey(phase))]) {
    if (stored === null) continue;
    const hit = decodePhase(stored);
    if (hit) return hit;
    warn(`stored phase does not decode; running it again. runId=${memo.runId} phase=${phase}`);
  }
  const record = await compute();
  const bytes = encodeRecord({ v: encodeValue(record.value), c: record.cost });
  if (bytes.length <= KV_ROOM) await kv.put(key, bytes);
  else await memo.put(phaseMemoKey(phase), bytes);
  return record;
}
