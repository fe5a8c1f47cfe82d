/** Lazy platform access: the IndexedDB adapter imports in Node, and opening it there rejects with UNSUPPORTED_PLATFORM. */
import { expect, it } from 'vitest';
import { IndexedDbObjectStore } from '../../../src/stores/indexeddb/index.js';
import { rejectionCode } from '../../core/objects/object-store.conformance.js';

it('imports in Node; open, calls and deleteDatabase reject with UNSUPPORTED_PLATFORM', async () => {
  expect(typeof (globalThis as { indexedDB?: unknown }).indexedDB).toBe('undefined');
  const store = new IndexedDbObjectStore({ name: 'node' });
  expect(await rejectionCode(IndexedDbObjectStore.open({ name: 'node' }))).toBe('UNSUPPORTED_PLATFORM');
  expect(await rejectionCode(store.get('k'))).toBe('UNSUPPORTED_PLATFORM');
  expect(await rejectionCode(store.put('k', new Uint8Array(1)))).toBe('UNSUPPORTED_PLATFORM');
  expect(await rejectionCode(IndexedDbObjectStore.deleteDatabase('node'))).toBe('UNSUPPORTED_PLATFORM');
});
