/**
 * The WAL writer's put scheduling: durable commits start a put as soon as the writer is free;
 * a batch of only non-durable commits (claims, sweeps) waits for a durable commit to share its put
 * and is stored on its own only after `nonDurableFlushMs`. Before this, a claim's commit started a
 * put at once and the settlement that followed it waited behind that put: two sequential puts per
 * workflow step instead of one.
 */
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { WalWriter } from '../../../src/core/kv/wal/wal-writer.js';
import { CountingObjectStore } from '../../../src/testing/counting-store.js';
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../../src/core/objects/object-store.js';
import { decodeWalObject, encodeCommit } from '../../../src/core/kv/wal/wal-format.js';
import { GatedStore } from '../../support/gated-store.js';

let seq = 0;
/** One encoded commit putting `key`. */
const bytes = (key: string): Uint8Array => encodeCommit({ seq: ++seq, entries: [{ key: new TextEncoder().encode(key), seq, kind: 'put', value: new Uint8Array(8) }] });

/** Lets every queued microtask and one round of macrotasks run. */
const turn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

function writer(store: ObjectStore, nonDurableFlushMs: number): WalWriter {
  return new WalWriter(store, 'kv', 1, 1, { flushIntervalMs: 0, flushMaxBytes: 1 << 20, nonDurableFlushMs, clock: systemClock }, () => undefined);
}

async function commitsOf(store: ObjectStore, id: number): Promise<number> {
  const obj = await store.get(`kv/wal/${String(id).padStart(20, '0')}`);
  if (!obj) throw new Error(`no WAL object ${id}`);
  return decodeWalObject(obj.data, `wal ${id}`).commits.length;
}

describe('WalWriter put scheduling', () => {
  it('a non-durable commit followed by a durable one shares its put', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const wal = writer(store, 60_000);
    const claim = wal.append(bytes('claim'), false);
    await turn();
    await turn();
    expect(store.snapshot().put.calls).toBe(0); // nothing durable is waiting: no put yet
    await wal.append(bytes('ack'), true);
    await claim;
    expect(store.snapshot().put.calls).toBe(1);
    expect(await commitsOf(store, 1)).toBe(2);
  });

  it('a batch of only non-durable commits is stored on its own once its delay passes', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const wal = writer(store, 1);
    await Promise.all([wal.append(bytes('a'), false), wal.append(bytes('b'), false)]);
    expect(store.snapshot().put.calls).toBe(1);
    expect(wal.durableId).toBe(1);
    expect(await commitsOf(store, 1)).toBe(2);
  });

  it('non-durable commits made during a put wait for the next durable commit instead of a put of their own', async () => {
    const inner = new GatedStore(new MemoryObjectStore());
    const store = new CountingObjectStore(inner);
    const wal = writer(store, 60_000);
    inner.hold();
    const first = wal.append(bytes('ack-1'), true);
    await turn();
    expect(store.snapshot().put.calls).toBe(1); // in flight, held
    const claim = wal.append(bytes('claim'), false);
    inner.release();
    await first;
    await turn();
    await turn();
    expect(store.snapshot().put.calls).toBe(1);
    await wal.append(bytes('ack-2'), true);
    await claim;
    expect(store.snapshot().put.calls).toBe(2);
    expect(await commitsOf(store, 2)).toBe(2);
  });

  it('flush stores a pending non-durable batch at once', async () => {
    const store = new CountingObjectStore(new MemoryObjectStore());
    const wal = writer(store, 60_000);
    const claim = wal.append(bytes('claim'), false);
    await wal.flush();
    await claim;
    expect(store.snapshot().put.calls).toBe(1);
    expect(wal.durableId).toBe(1);
  });

  it('a durable commit resolves only after the non-durable commits before it are stored', async () => {
    const inner = new GatedStore(new MemoryObjectStore());
    const wal = writer(inner, 60_000);
    const order: string[] = [];
    inner.hold();
    void wal.append(bytes('claim'), false).then(() => order.push('claim'));
    const ack = wal.append(bytes('ack'), true).then(() => order.push('ack'));
    await turn();
    expect(order).toEqual([]);
    inner.release();
    await ack;
    expect(order).toEqual(['claim', 'ack']);
  });
});
