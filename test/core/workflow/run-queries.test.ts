/** Run queries on the memory store: the writer and the reader share one store instance. */
import { MemoryObjectStore } from '../../../src/core/objects/memory-store.js';
import { defineRunQueriesSuite } from './run-queries.suite.js';

defineRunQueriesSuite('memory store', async () => {
  const store = new MemoryObjectStore();
  return { writer: store, reader: store };
});
