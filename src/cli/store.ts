/**
 * Opening the store a command names: a filesystem directory or `s3://bucket/prefix`, the engine
 * path inside it (`--path`, else the README's `app`, else the only engine found), and a read-only
 * `WorkflowReader` on it. Readers never take the writer lock, so every read command runs beside a
 * live writer. Write commands open a `Queue` as the writer for the length of one operation.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isTaqubaError } from '../core/errors.js';
import type { ObjectStore } from '../core/objects/object-store.js';
import { Queue, type WriterHeartbeat } from '../core/queue/index.js';
import { ClusterLayout, parseShardQueuePath } from '../core/cluster/layout.js';
import { WorkflowReader } from '../core/workflow/history/workflow-reader.js';
import { FileSystemObjectStore } from '../node/fs-store.js';
import { S3ObjectStore } from '../stores/s3/s3-store.js';
import { CliError, usageError } from './cli-error.js';
import { selectQueues } from './queues.js';

/** The options every command shares (commander's global options). */
export interface StoreOptions {
  readonly store: string;
  readonly path?: string;
  /** The runtime's `queueName`; absent: every queue of the store (see queues.ts). */
  readonly queue?: string;
  readonly memoPrefix: string;
  readonly endpoint?: string;
  readonly region?: string;
  readonly forcePathStyle?: boolean;
}

/** The engine path the README's quick start uses; tried first when `--path` is not given. */
export const README_PATH = 'app';
const MANIFEST_KEY = /^(.+)\/manifest\/[0-9]{20}$/;

export interface OpenedStore {
  readonly store: ObjectStore;
  /** What the user named, for messages. */
  readonly location: string;
  /** Whether the store offers a writer lock (the filesystem does, S3 does not). */
  readonly hasWriterLock: boolean;
  close(): void;
}

function s3Store(location: string, options: StoreOptions): OpenedStore {
  const rest = location.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  if (bucket === '') throw usageError(`an S3 location needs a bucket. store=${JSON.stringify(location)}`, 'write it as s3://bucket/prefix');
  const env = process.env;
  const store = new S3ObjectStore({
    bucket,
    prefix: prefix === '' ? '' : `${prefix}/`,
    clientConfig: {
      region: options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
      ...(options.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL ? { endpoint: options.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL } : {}),
      ...(options.forcePathStyle ? { forcePathStyle: true } : {}),
    },
    retry: { maxAttempts: 3 },
  });
  return { store, location, hasWriterLock: false, close: () => store.destroy() };
}

async function fsStore(location: string): Promise<OpenedStore> {
  const root = resolve(location);
  const info = await stat(root).catch(() => undefined);
  if (!info) throw new CliError('NOT_A_STORE', `no such directory. store=${JSON.stringify(location)}`, 'pass the store directory with --store (default ./.taquba), or s3://bucket/prefix');
  if (!info.isDirectory()) throw new CliError('NOT_A_STORE', `not a directory. store=${JSON.stringify(location)}`, 'pass the store directory with --store');
  return { store: new FileSystemObjectStore({ root }), location, hasWriterLock: true, close: () => undefined };
}

/** The object store at `options.store`. NOT_A_STORE for a missing directory, USAGE for a bad S3 location. */
export async function openStore(options: StoreOptions): Promise<OpenedStore> {
  const location = options.store;
  if (location.startsWith('s3://')) return s3Store(location, options);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location)) throw usageError(`unsupported store location. store=${JSON.stringify(location)}`, 'use a directory or s3://bucket/prefix');
  return fsStore(location);
}

/** Keys a search for engines reads before giving up (a wrong --store can name a huge tree). */
const SEARCH_LIMIT = 200_000;

async function hasEngine(store: ObjectStore, path: string): Promise<boolean> {
  for await (const info of store.list(`${path}/manifest/`)) if (MANIFEST_KEY.test(info.key)) return true;
  return false;
}

/** Engine paths in the store (each has a manifest sequence), sorted. USAGE when the store is too big to search. */
export async function findEngines(store: ObjectStore): Promise<string[]> {
  const found = new Set<string>();
  let seen = 0;
  for await (const info of store.list('')) {
    if (++seen > SEARCH_LIMIT) throw usageError(`too many objects to search for engines (over ${SEARCH_LIMIT})`, 'name the engine with --path');
    const match = MANIFEST_KEY.exec(info.key);
    if (match) found.add(match[1]);
  }
  return [...found].sort();
}

/** `--path`, else `app` when it is an engine, else the store's only engine. NOT_A_STORE / USAGE otherwise. */
export async function resolveEnginePath(opened: OpenedStore, path: string | undefined): Promise<string> {
  if (path !== undefined) return path;
  if (await hasEngine(opened.store, README_PATH)) return README_PATH;
  const engines = await findEngines(opened.store);
  if (engines.length === 1) return engines[0];
  if (engines.length === 0) throw notAStore(opened.location);
  throw usageError(`the store holds several engines; pick one with --path. engines=${engines.join(',')}`);
}

function notAStore(location: string, path?: string): CliError {
  const where = path === undefined ? '' : ` path=${JSON.stringify(path)}`;
  return new CliError('NOT_A_STORE', `no taquba store here. store=${JSON.stringify(location)}${where}`, 'pass the store root with --store and the Queue.open path with --path');
}

/** A read-only view (no polling: commands refresh when they need to). */
export async function openReader(opened: OpenedStore, options: StoreOptions): Promise<{ reader: WorkflowReader; path: string }> {
  const path = await resolveEnginePath(opened, options.path);
  try {
    const reader = await WorkflowReader.open(opened.store, path, { queueName: options.queue, memoPrefix: options.memoPrefix, pollIntervalMs: null, logger: false });
    return { reader, path };
  } catch (e) {
    if (isTaqubaError(e, 'NOT_FOUND')) throw notAStore(opened.location, path);
    throw e;
  }
}

/** The store opened as its writer, or a live writer holds it (`why`: what says so): go through its command inbox. */
export type WriteAccess = { readonly kind: 'writer'; readonly queue: Queue; readonly path: string } | { readonly kind: 'live'; readonly path: string; readonly why: string };

/**
 * Opens the queue as the store's writer for one operation, unless a live writer holds it: on a
 * store with a writer lock, a live holder; on one without (S3), a writer whose heartbeat does not
 * say it closed (opening would fence it), unless `force` is set. A cluster's shard is LOCKED.
 */
export async function openWriter(opened: OpenedStore, options: StoreOptions, force: boolean): Promise<WriteAccess> {
  // A reader first: it proves an engine is there (Queue.open would create one) and reads the heartbeat.
  const { reader, path } = await openReader(opened, options);
  let beat: WriterHeartbeat | undefined;
  try {
    // A mistyped --queue fails here, before a writer opens (which would bump the store's epoch).
    await selectQueues(reader.queue, options.queue);
    beat = await reader.queue.writerHeartbeat();
  } finally {
    await reader.close();
  }
  // A cluster's shard engines take no writer lock (leases guard them): opening one would fence its owner.
  const shard = parseShardQueuePath(path);
  if (shard && !force && (await opened.store.get(new ClusterLayout(shard.cluster).clusterKey)) !== undefined) {
    throw new CliError(
      'LOCKED',
      `this engine is shard ${shard.shard} of the cluster ${JSON.stringify(shard.cluster)}, which its owner holds under a lease. store=${JSON.stringify(opened.location)} path=${JSON.stringify(path)}`,
      'send it through a member of the cluster (openCluster with takesShards: false, then cluster.signal / cluster.cancel); pass --force only when no member runs',
    );
  }
  if (!opened.hasWriterLock && !force && !beat?.closed) {
    return { kind: 'live', path, why: `this store has no writer lock, and no clean close of its last writer is recorded. store=${JSON.stringify(opened.location)} path=${JSON.stringify(path)}` };
  }
  try {
    return { kind: 'writer', queue: await Queue.open(opened.store, path, { logger: false }), path };
  } catch (e) {
    if (isTaqubaError(e, 'LOCKED')) return { kind: 'live', path, why: e.message };
    throw e;
  }
}
