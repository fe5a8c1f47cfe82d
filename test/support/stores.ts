/**
 * One fixture per Node-reachable store, for the suite registrations (`define…Suite(name, factory)`).
 * Call a fixture at the top level of a test file: it registers the file's cleanup hooks and returns
 * a factory that gives every caller a fresh, empty store. The browser-only stores (IndexedDB, OPFS)
 * are in browser-stores.ts, so Node test files never import DOM code.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { MemoryObjectStore } from '../../src/core/objects/memory-store.js';
import type { ObjectStore } from '../../src/core/objects/object-store.js';
import { FileSystemObjectStore, type FileSystemObjectStoreOptions } from '../../src/node/fs-store.js';
import { openS3Target, type S3Target } from '../setup/s3-target.js';

/** Makes a fresh store per call. */
export type StoreFactory = () => ObjectStore | Promise<ObjectStore>;

/** A named store factory, ready for `define…Suite(fixture.name, fixture.factory)`. */
export interface StoreFixture<S extends ObjectStore = ObjectStore> {
  readonly name: string;
  readonly factory: () => Promise<S>;
}

/** MemoryObjectStore: nothing to clean up. */
export function memoryStore(): StoreFixture<MemoryObjectStore> {
  return { name: 'memory store', factory: async () => new MemoryObjectStore() };
}

/**
 * FileSystemObjectStore on a fresh temp directory per store; the directories are removed after
 * the file. `options` go to the constructor (e.g. `writerLock: false`).
 */
export function fsStore(options: Omit<FileSystemObjectStoreOptions, 'root'> = {}, name = 'filesystem store'): StoreFixture<FileSystemObjectStore> {
  const roots: string[] = [];
  afterAll(async () => {
    for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
  });
  return {
    name,
    factory: async () => {
      const root = await mkdtemp(join(tmpdir(), 'taquba-test-'));
      roots.push(root);
      return new FileSystemObjectStore({ root, ...options });
    },
  };
}

/**
 * S3ObjectStore on the local S3 test server (or the endpoint configured in the environment, see
 * test/setup/s3-target.ts): one server per file, every store on a fresh prefix of the one bucket.
 */
export function s3Store(): StoreFixture & { readonly target: () => S3Target } {
  let target: S3Target | undefined;
  beforeAll(async () => {
    target = await openS3Target();
  });
  afterAll(async () => {
    await target?.close();
  });
  const current = (): S3Target => {
    if (!target) throw new Error('s3Store(): the target opens in beforeAll; call the factory inside a test');
    return target;
  };
  return { name: 's3 store', factory: async () => current().newStore(), target: current };
}
