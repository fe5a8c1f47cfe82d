/**
 * Persisting claim cursors across a clean close. At close, every queue with a bound or a
 * known-empty verdict gets a Cursor record (one durable transaction). At open the records are
 * restored and then deleted durably before any traffic: a stale record surviving a later crash
 * could hide jobs behind an outdated bound. After a crash there is no record and the first claim
 * of each queue scans from the front.
 */
import { fromUtf8 } from '../../bytes.js';
import { decodeRecord, encodeRecord } from '../../codec.js';
import type { KvDb } from '../../kv/kv-db.js';
import type { LogSink } from '../../logger.js';
import type { ClaimCursor, CursorSnapshot } from '../transitions/claim-cursor.js';
import { CURSOR_PREFIX, cursorKey } from '../records/keys.js';
import { runTransaction } from './staged-txn.js';

function encodeSnapshot(s: CursorSnapshot): Uint8Array {
  return encodeRecord({ key: s.bound?.key, inclusive: s.bound?.inclusive, empty: s.empty });
}

function decodeSnapshot(bytes: Uint8Array): CursorSnapshot | undefined {
  const r = decodeRecord(bytes) as Record<string, unknown>;
  if (typeof r !== 'object' || r === null) return undefined;
  const bound = r.key instanceof Uint8Array ? { key: r.key, inclusive: r.inclusive === true } : undefined;
  return { bound, empty: r.empty === true };
}

/** Writes the cursor state of every queue that has some (durable). */
export async function persistCursors(db: KvDb, cursor: ClaimCursor): Promise<void> {
  const snapshots = cursor.export();
  if (snapshots.size === 0) return;
  await runTransaction(db, async (s) => {
    for (const [queue, snap] of snapshots) s.put(cursorKey(queue), encodeSnapshot(snap));
  });
}

/** Restores persisted cursors and deletes their records durably. Returns how many it restored. */
export async function restoreCursors(db: KvDb, cursor: ClaimCursor, logger: LogSink): Promise<number> {
  const keys: Uint8Array[] = [];
  let restored = 0;
  for await (const entry of db.scan({ prefix: CURSOR_PREFIX })) {
    keys.push(entry.key);
    try {
      const snap = decodeSnapshot(entry.value);
      if (snap) {
        cursor.restore(fromUtf8(entry.key.subarray(CURSOR_PREFIX.length)), snap);
        restored++;
      }
    } catch (e) {
      logger.warn('ignoring an undecodable cursor record', e);
    }
  }
  if (keys.length > 0) {
    await runTransaction(db, async (s) => {
      for (const k of keys) s.delete(k);
    });
  }
  return restored;
}
