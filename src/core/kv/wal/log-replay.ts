/**
 * Reading the append-log WAL back (docs/rfcs/0002-wal-append-log.md): which epochs have
 * segments, where each sealed epoch ends, and the batches of one epoch up to its end. Used by the
 * writer's open (after sealing) and by read-only handles.
 */
import { CorruptDataError, NotFoundError } from '../../errors.js';
import { createObject } from '../../objects/create-object.js';
import type { ObjectStore } from '../../objects/object-store.js';
import { parseSequenceId } from '../format.js';
import type { WalCommit } from './wal-format.js';
import {
  comparePositions,
  decodeLogEnd,
  encodeLogEnd,
  logEndKey,
  logSegmentKey,
  parseLogSegmentKey,
  scanSegment,
  type LogEnd,
  type LogPosition,
} from './log-format.js';

/** Segment numbers of each epoch that has any, epochs and segments ascending. */
export async function listLogSegments(store: ObjectStore, path: string): Promise<Map<number, number[]>> {
  const byEpoch = new Map<number, number[]>();
  for await (const info of store.list(`${path}/log/`)) {
    const pos = parseLogSegmentKey(info.key);
    if (!pos) continue;
    const list = byEpoch.get(pos[0]) ?? [];
    list.push(pos[1]);
    byEpoch.set(pos[0], list);
  }
  for (const list of byEpoch.values()) list.sort((a, b) => a - b);
  return new Map([...byEpoch].sort((a, b) => a[0] - b[0]));
}

/** Epochs from `fromEpoch` on whose log end is recorded, ascending (ends are kept forever, so this lists only recent epochs). */
export async function listLogEndEpochs(store: ObjectStore, path: string, fromEpoch: number): Promise<number[]> {
  const epochs: number[] = [];
  const startAfter = fromEpoch > 0 ? logEndKey(path, fromEpoch - 1) : undefined;
  for await (const info of store.list(`${path}/log-end/`, { startAfter })) {
    const epoch = parseSequenceId(info.key);
    if (epoch !== undefined) epochs.push(epoch);
  }
  return epochs.sort((a, b) => a - b);
}

/**
 * The recorded end of `epoch`'s log, or undefined when none was recorded yet. An end we read may
 * be another party's put that has not answered yet (on the filesystem: renamed, its directory not
 * yet synced), which a machine crash could still undo: it is made durable before anyone acts on
 * it (a sealed writer answering FENCED, an opener replaying up to it).
 */
export async function readLogEnd(store: ObjectStore, path: string, epoch: number): Promise<LogEnd | undefined> {
  const key = logEndKey(path, epoch);
  const obj = await store.get(key);
  if (!obj) return undefined;
  const end = checkedEnd(decodeLogEnd(obj.data, key), epoch, key);
  await store.appendLogs?.sync?.(key);
  return end;
}

/**
 * Records `proposal` as the end of its epoch's log, create-only, and returns the end that counts:
 * ours, or the one another party (the old writer, another opener) recorded first.
 */
export async function decideLogEnd(store: ObjectStore, path: string, proposal: LogEnd): Promise<LogEnd> {
  const key = logEndKey(path, proposal.epoch);
  const result = await createObject(store, key, encodeLogEnd(proposal));
  if (result.created) return proposal;
  if (!result.existing) throw new CorruptDataError(`log end vanished; ends are never deleted. object=${key}`, { object: key, problem: 'log_end_missing' });
  const end = checkedEnd(decodeLogEnd(result.existing.data, key), proposal.epoch, key);
  await store.appendLogs?.sync?.(key); // as in readLogEnd: another party's put may not have answered yet
  return end;
}

function checkedEnd(end: LogEnd, epoch: number, key: string): LogEnd {
  if (end.epoch !== epoch) throw new CorruptDataError(`log end names another epoch. object=${key} epoch=${end.epoch}`, { object: key, problem: 'log_end_epoch' });
  return end;
}

/**
 * What an opener reads as the end of a log nobody recorded an end for: the valid prefix of its
 * last segment (earlier segments are whole: a writer rolls only after they are durable).
 */
export async function measureLog(store: ObjectStore, path: string, epoch: number, segments: readonly number[]): Promise<LogEnd> {
  const last = segments.at(-1);
  if (last === undefined) return { epoch, segment: 0, length: 0 };
  const key = logSegmentKey(path, epoch, last);
  const obj = await store.get(key);
  if (!obj) return { epoch, segment: last, length: 0 };
  const length = scanSegment(obj.data, key, [epoch, last]).validEnd;
  // What we read may sit unsynced in the OS cache (the writer died between write and sync): make
  // it durable before an end that covers it is recorded (earlier segments were synced by their writer).
  await store.appendLogs?.sync?.(key);
  return { epoch, segment: last, length };
}

/** The first segment of `epoch` that replay from `from` still needs (segments are numbered from 1). */
export function firstNeededSegment(epoch: number, from: LogPosition | undefined): number {
  return from && from[0] === epoch ? Math.max(1, from[1]) : 1;
}

/**
 * CORRUPT_DATA naming the first segment missing from `segments` that replay up to `end` needs:
 * every segment of the epoch from `from` (from 1 when `from` lies in an earlier epoch) through
 * `end.segment`. Segments are numbered without gaps and only those before the manifest's
 * `logStart` are ever deleted, so a missing one is damage: skipping it would drop its commits.
 */
export function checkSegmentsPresent(path: string, epoch: number, segments: readonly number[], from: LogPosition | undefined, end: LogEnd): void {
  if (end.segment === 0 || (from && from[0] > epoch)) return;
  const first = firstNeededSegment(epoch, from);
  const present = new Set(segments);
  // An end of 0 bytes names a segment that holds nothing (measured while it was being created).
  const last = end.length === 0 ? end.segment - 1 : end.segment;
  for (let segment = first; segment <= last; segment++) {
    if (present.has(segment)) continue;
    const object = logSegmentKey(path, epoch, segment);
    throw new CorruptDataError(`log segment missing: replay needs it up to the log's end (segment ${end.segment}, ${end.length} bytes). object=${object}`, { object, problem: 'log_segment_missing' });
  }
}

/** True when a record of `epoch` ending at `offset` of `segment` lies within `end`. */
export function covers(end: LogEnd, segment: number, offset: number): boolean {
  return segment < end.segment || (segment === end.segment && offset <= end.length);
}

/**
 * The batches of one epoch's segments from `from`, in order. With `end`, exactly up to it (a bad
 * record before it is CORRUPT_DATA); without (a live writer's log, for readers), each segment up
 * to its first incomplete record.
 * Rejects with NOT_FOUND when a segment vanished meanwhile (retired after a newer manifest).
 */
export async function* readEpochBatches(
  store: ObjectStore,
  path: string,
  epoch: number,
  segments: readonly number[],
  from: LogPosition | undefined,
  end: LogEnd | undefined,
): AsyncGenerator<{ readonly position: LogPosition; readonly commits: readonly WalCommit[] }> {
  for (const segment of segments) {
    const position: LogPosition = [epoch, segment];
    if (from && comparePositions(position, from) < 0) continue;
    if (end && segment > end.segment) break;
    const key = logSegmentKey(path, epoch, segment);
    const obj = await store.get(key);
    // Retired by a flush since the listing: the caller starts over from the newer manifest.
    if (!obj) throw new NotFoundError(`log segment vanished. object=${key}`, { object: key });
    const limit = !end ? undefined : segment === end.segment ? end.length : obj.data.length;
    const scanned = scanSegment(obj.data, key, position, limit);
    for (const commits of scanned.batches) yield { position, commits };
  }
}
