/**
 * Where the S3 tests run: the local test server (default), or a real endpoint named by
 * environment variables (see docs/s3.md):
 *
 *   TAQUBA_S3_BUCKET      the bucket; setting it switches the suite to the real endpoint
 *   TAQUBA_S3_ENDPOINT    endpoint URL (omit for AWS S3)
 *   TAQUBA_S3_REGION      region (default us-east-1; R2 takes 'auto')
 *   TAQUBA_S3_PREFIX      key prefix for everything the suite writes (default 'taquba-test/')
 *   TAQUBA_S3_PATH_STYLE  '1' for path-style addressing (MinIO and most emulators)
 *   AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN, or any SDK credential source)
 *
 * Every store gets a fresh prefix below `<TAQUBA_S3_PREFIX><run id>/`, so runs never see each
 * other; on a real endpoint the objects are deleted afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { S3ObjectStore, type S3ObjectStoreOptions } from '../../src/stores/s3/index.js';
import { startS3TestServer, type S3TestServer, type S3TestServerOptions } from './s3-server.js';

export interface S3TargetEnv {
  readonly bucket: string;
  readonly endpoint?: string;
  readonly region: string;
  readonly prefix: string;
  readonly forcePathStyle: boolean;
}

/** The real endpoint configured in the environment, or undefined for the local server. */
export function s3TargetFromEnv(env: NodeJS.ProcessEnv = process.env): S3TargetEnv | undefined {
  const bucket = env.TAQUBA_S3_BUCKET;
  if (!bucket) return undefined;
  return {
    bucket,
    endpoint: env.TAQUBA_S3_ENDPOINT || undefined,
    region: env.TAQUBA_S3_REGION || 'us-east-1',
    prefix: env.TAQUBA_S3_PREFIX ?? 'taquba-test/',
    forcePathStyle: env.TAQUBA_S3_PATH_STYLE === '1' || env.TAQUBA_S3_PATH_STYLE === 'true',
  };
}

/** True when the suite runs against a real endpoint (fault injection and front tests then skip). */
export const S3_EXTERNAL = s3TargetFromEnv() !== undefined;

/** Fast retries for tests: the local server answers in milliseconds. */
export const TEST_RETRY = { maxAttempts: 6, baseDelayMs: 5, maxDelayMs: 100 } as const;

export interface S3Target {
  /** The local server, or undefined on a real endpoint. */
  readonly server: S3TestServer | undefined;
  readonly bucket: string;
  readonly clientConfig: S3ClientConfig;
  /** A store on a fresh prefix (unless `prefix` is given). */
  newStore(options?: Partial<S3ObjectStoreOptions>): S3ObjectStore;
  /** Destroys the clients; on a real endpoint deletes what the run wrote; stops the local server. */
  close(): Promise<void>;
}

let storeCounter = 0;

/** Starts the local test server, or connects to the endpoint from the environment. */
export async function openS3Target(serverOptions?: S3TestServerOptions): Promise<S3Target> {
  const env = s3TargetFromEnv();
  const server = env ? undefined : await startS3TestServer(serverOptions);
  const bucket = env?.bucket ?? server!.bucket;
  const clientConfig: S3ClientConfig = env
    ? { region: env.region, endpoint: env.endpoint, forcePathStyle: env.forcePathStyle }
    : { region: server!.region, endpoint: server!.endpoint, forcePathStyle: true, credentials: server!.credentials };
  const runPrefix = `${env?.prefix ?? ''}${Date.now().toString(36)}-${randomBytes(4).toString('hex')}/`;
  const stores: S3ObjectStore[] = [];

  return {
    server,
    bucket,
    clientConfig,
    newStore(options = {}) {
      const store = new S3ObjectStore({
        bucket,
        prefix: `${runPrefix}s${storeCounter++}/`,
        clientConfig,
        retry: TEST_RETRY,
        requestTimeoutMs: 10_000,
        ...options,
      });
      stores.push(store);
      return store;
    },
    async close() {
      if (env) {
        const sweeper = new S3ObjectStore({ bucket, prefix: runPrefix, clientConfig, retry: TEST_RETRY });
        for await (const info of sweeper.list('')) await sweeper.delete(info.key);
        sweeper.destroy();
      }
      for (const store of stores) store.destroy();
      await server?.stop();
    },
  };
}

/**
 * `s3.put` raw measurement: sequential unconditional PutObjects of `bytes` bytes through the
 * store; returns puts per second. The baseline a WAL put cannot beat (one PUT per group commit).
 */
export async function measureRawPuts(store: S3ObjectStore, options: { count?: number; bytes?: number } = {}): Promise<{ putsPerSecond: number; count: number; ms: number }> {
  const count = options.count ?? 200;
  const data = randomBytes(options.bytes ?? 100);
  const start = performance.now();
  for (let i = 0; i < count; i++) await store.put(`bench/put-${i % 16}`, data);
  const ms = performance.now() - start;
  return { putsPerSecond: (count * 1000) / ms, count, ms };
}
