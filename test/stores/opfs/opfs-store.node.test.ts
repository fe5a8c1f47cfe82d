/** Lazy platform access: the OPFS adapter imports in Node, and opening it there rejects with UNSUPPORTED_PLATFORM. */
import { expect, it } from 'vitest';
import { OpfsObjectStore } from '../../../src/stores/opfs/index.js';
import { rejectionCode } from '../../core/objects/object-store.conformance.js';

it('imports in Node; open, calls and deleteDirectory reject with UNSUPPORTED_PLATFORM', async () => {
  const store = new OpfsObjectStore({ directory: 'node' });
  expect(await rejectionCode(OpfsObjectStore.open({ directory: 'node' }))).toBe('UNSUPPORTED_PLATFORM');
  expect(await rejectionCode(store.get('k'))).toBe('UNSUPPORTED_PLATFORM');
  expect(await rejectionCode(store.put('k', new Uint8Array(1)))).toBe('UNSUPPORTED_PLATFORM');
  expect(await rejectionCode(OpfsObjectStore.deleteDirectory('node'))).toBe('UNSUPPORTED_PLATFORM');
});
