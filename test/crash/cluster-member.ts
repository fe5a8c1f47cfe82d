/**
 * Child process of the cluster crash tests: one cluster member over the S3 test server or a
 * filesystem root. Reads commands from stdin, one per line:
 *   submit <from> <to>   submits runs r<from>..r<to - 1> through this member, printing `accepted <runId>`
 *                        as each submission is answered, then `submitted <n>`
 *   leave                leaves cleanly, prints `left`, exits
 *   stats                prints `walputs {shard: count}` (with `report`)
 * Prints `owned <shards>` whenever its owned shards change, `term <runId>` per terminal hook call,
 * `warn <message> <fields>` for the cluster's warnings, `renewal <json>` when its lease renewal
 * figures change (the longest gap between renewals, round trip and timer lag).
 *
 * Every step and hook call stages a KV effect under a key unique to the call
 * (`step/<run>/<step>/<member>-<n>`, `term/<run>/<member>-<n>`) whose value is the wall-clock
 * time the call returned, so the parent can see which calls committed (exactly one per step and
 * per run), and that nothing a paused member ran after it was stopped ever committed.
 *
 * argv: a JSON config (see Config).
 */
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { utf8 } from '../../src/core/bytes.js';
import { openCluster } from '../../src/core/cluster/index.js';
import type { ObjectStore } from '../../src/core/objects/object-store.js';
import { StepOutcome, type Step } from '../../src/core/workflow/index.js';
import { FileSystemObjectStore } from '../../src/node/index.js';
import { S3ObjectStore } from '../../src/stores/s3/index.js';
import { S3_TEST_CREDENTIALS } from '../setup/s3-server.js';

export interface Config {
  readonly store: { readonly type: 's3'; readonly endpoint: string; readonly bucket: string; readonly region: string; readonly prefix: string } | { readonly type: 'fs'; readonly root: string };
  readonly memberId: string;
  readonly shards: number;
  readonly leaseMs: number;
  readonly maxClockSkewMs: number;
  readonly steps: number;
  readonly stepDelayMs: number;
  /** Benchmarks: print `ran <shard> <step>` per step, and count WAL puts per shard (printed on `stats`). */
  readonly report?: boolean;
}

const config = JSON.parse(process.argv[2]!) as Config;
const say = (line: string): void => {
  writeSync(1, `${line}\n`);
};

const baseStore: ObjectStore =
  config.store.type === 's3'
    ? new S3ObjectStore({
        bucket: config.store.bucket,
        prefix: config.store.prefix,
        clientConfig: { region: config.store.region, endpoint: config.store.endpoint, forcePathStyle: true, credentials: S3_TEST_CREDENTIALS },
        retry: { maxAttempts: 6, baseDelayMs: 10, maxDelayMs: 200 },
        requestTimeoutMs: 10_000,
      })
    : new FileSystemObjectStore({ root: config.store.root });

/** WAL puts per shard engine (benchmark reports), counted on the way to the store. */
const walPuts = new Map<number, number>();
const store: ObjectStore = config.report
  ? {
      get: (k, o) => baseStore.get(k, o),
      put: (k, d, o) => {
        const m = /^cl\/shards\/(\d+)\/queue\/wal\//.exec(k);
        if (m) walPuts.set(Number(m[1]), (walPuts.get(Number(m[1])) ?? 0) + 1);
        return baseStore.put(k, d, o);
      },
      delete: (k) => baseStore.delete(k),
      list: (p, o) => baseStore.list(p, o),
      ...(baseStore.deleteMany ? { deleteMany: (keys: readonly string[]) => baseStore.deleteMany!(keys) } : {}),
    }
  : baseStore;

let calls = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runner(step: Step): Promise<StepOutcome> {
  // Real time is the subject: steps that take a little while, so kills and pauses land mid-step.
  if (config.stepDelayMs > 0) await sleep(config.stepDelayMs);
  if (config.report) say(`ran ${cluster.shardOf(step.runId)} ${step.stepNumber}`);
  step.effects.put(`step/${step.runId}/${step.stepNumber}/${config.memberId}-${calls++}`, utf8(String(Date.now())));
  return step.stepNumber + 1 < config.steps ? StepOutcome.continueNow(step.payload) : StepOutcome.succeed(step.payload);
}

const cluster = await openCluster(store, {
  name: 'cl',
  shards: config.shards,
  memberId: config.memberId,
  leaseMs: config.leaseMs,
  maxClockSkewMs: config.maxClockSkewMs,
  inboxPollMs: 50,
  // The S3 test server runs in the test's own process: with the whole suite and two busy loops
  // beside it its round trips reached 7.7 s, and a command's several round trips outlasted the
  // 60 s default. A TIMEOUT cannot be retried here without running a workflow twice (issue 25).
  commandTimeoutMs: 240_000,
  runner,
  hook: {
    async onTermination(outcome, effects) {
      effects.put(`term/${outcome.runId}/${config.memberId}-${calls++}`, utf8(String(Date.now())));
      say(`term ${outcome.runId}`);
    },
  },
  queueOptions: { defaultQueueConfig: { leaseMs: 10_000, retryBackoffBaseMs: 50 } },
  runtimeOptions: { pollIntervalMs: 100, maxConcurrentSteps: 32 },
  logger: { warn: (m, f) => say(`warn ${m} ${JSON.stringify(f ?? {})}`), error: (m, f) => say(`warn ${m} ${JSON.stringify(f ?? {})}`) },
});
say('open');

let owned = '';
let renewal = '';
setInterval(() => {
  const now = cluster.ownedShards().join(',');
  if (now !== owned) {
    owned = now;
    say(`owned ${now}`);
  }
  const stats = JSON.stringify(cluster.renewalStats());
  if (stats !== renewal) {
    renewal = stats;
    say(`renewal ${stats}`);
  }
}, 50);

async function submit(from: number, to: number): Promise<void> {
  const ids = Array.from({ length: to - from }, (_, i) => `r${from + i}`);
  let next = 0;
  // 64 submissions in flight at once: most go through other members' inboxes, batched per shard.
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!;
        await cluster.submit({ runId: id, input: utf8(id) });
        // Per run, so the parent knows which runs were durably submitted when it kills or pauses a member.
        say(`accepted ${id}`);
      }
    }),
  );
  say(`submitted ${ids.length}`);
}

for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, a, b] = line.split(' ');
  if (cmd === 'submit') void submit(Number(a), Number(b)).catch((e) => say(`error submit ${(e as Error).message}`));
  else if (cmd === 'stats') say(`walputs ${JSON.stringify(Object.fromEntries(walPuts))}`);
  else if (cmd === 'leave') {
    await cluster.leave();
    say('left');
    process.exit(0);
  }
}
