/**
 * What makes a run depend on its seed only. The engine (src/core) takes time from an injected
 * Clock, but it also gives the event loop turns (yieldToEventLoop: WAL writer, delete queue,
 * table writer: `setImmediate` in Node, `setTimeout(0)` without it) and draws writer
 * ids from `crypto.getRandomValues`. For the length of a run those globals are replaced: timers
 * and turns become virtual-time sleepers the simulation fires when it picks them, random bytes
 * come from the seed. Between two steps the simulation lets every
 * microtask run with one real `setImmediate` (saved before the patch), so no real timer, thread
 * or I/O ever decides an interleaving.
 */
import type { Prng } from './prng.js';
import type { VirtualTime } from './virtual-time.js';

const realSetImmediate = globalThis.setImmediate;

/** Resolves once every microtask queued so far (and every one they queue) has run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

interface FakeTimeout {
  unref(): FakeTimeout;
  ref(): FakeTimeout;
  hasRef(): boolean;
  [Symbol.toPrimitive](): number;
}

let installed = false;

/** Patches the globals for one run; returns the undo. Runs never overlap (one at a time). */
export function installDeterminism(time: VirtualTime, random: Prng): () => void {
  if (installed) throw new Error('two simulations at once in one process');
  installed = true;
  const g = globalThis as unknown as Record<string, unknown>;
  const saved = { setTimeout: g.setTimeout, clearTimeout: g.clearTimeout, setImmediate: g.setImmediate };
  const handles = new Map<number, ReturnType<VirtualTime['add']>>();
  let nextHandle = 1;
  g.setTimeout = (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): FakeTimeout => {
    const id = nextHandle++;
    handles.set(
      id,
      time.add(ms ?? 0, undefined, `setTimeout ${ms ?? 0}ms`, () => {
        handles.delete(id);
        fn(...args);
      }),
    );
    const handle: FakeTimeout = {
      unref: () => handle,
      ref: () => handle,
      hasRef: () => true,
      [Symbol.toPrimitive]: () => id,
    };
    return handle;
  };
  // A turn of the event loop is a timer due now, fired when the simulation picks it.
  g.setImmediate = (fn: (...args: unknown[]) => void, ...args: unknown[]): void => void time.add(0, undefined, 'setImmediate', () => fn(...args));
  g.clearTimeout = (handle: unknown): void => {
    const id = typeof handle === 'number' ? handle : Number(handle as FakeTimeout);
    const sleeper = handles.get(id);
    if (sleeper) time.cancel(sleeper);
    handles.delete(id);
  };
  const crypto = globalThis.crypto as unknown as Record<string, unknown>;
  Object.defineProperty(crypto, 'getRandomValues', {
    configurable: true,
    writable: true,
    value: <T extends ArrayBufferView | null>(array: T): T => {
      if (array) random.fill(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
      return array;
    },
  });
  return () => {
    g.setTimeout = saved.setTimeout;
    g.clearTimeout = saved.clearTimeout;
    g.setImmediate = saved.setImmediate;
    delete crypto.getRandomValues;
    installed = false;
  };
}
