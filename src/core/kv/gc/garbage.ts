/**
 * Garbage left by crashed or fenced writers, collected in the background once per writer open:
 *  - tables of older epochs that the manifest does not name (a flush or compaction whose
 *    manifest never landed); this writer's own tables are never garbage here;
 *  - WAL objects below `walStart`, except the recorded fences (see fence-ledger.ts);
 *  - manifests older than this writer's own.
 * Objects this writer retires later (WAL, replaced tables, superseded manifests) are deleted
 * as it retires them. Best effort: what is missed is collected at the next open.
 */
import type { ObjectStore } from '../../objects/object-store.js';
import type { FenceLedger } from '../fencing/fence-ledger.js';
import { parseSequenceId, parseTableKey } from '../format.js';
import type { VersionedManifest } from '../manifest/manifest-store.js';
import type { DeleteQueue } from './delete-queue.js';

export async function collectGarbage(store: ObjectStore, path: string, manifest: VersionedManifest, fences: FenceLedger, deletes: DeleteQueue): Promise<void> {
  const { runs, walStart, epoch } = manifest.data;
  const live = new Set(runs.flat().map((t) => t.id));
  const doomed: string[] = [];
  for await (const info of store.list(`${path}/sst/`)) {
    const table = parseTableKey(info.key);
    if (table && table.epoch < epoch && !live.has(table.name)) doomed.push(info.key);
  }
  for await (const info of store.list(`${path}/wal/`)) {
    const id = parseSequenceId(info.key);
    if (id === undefined || id >= walStart) break;
    if (!fences.isFence(id)) doomed.push(info.key);
  }
  for await (const info of store.list(`${path}/manifest/`)) {
    const id = parseSequenceId(info.key);
    if (id === undefined || id >= manifest.id) break;
    doomed.push(info.key);
  }
  deletes.add(doomed);
}
