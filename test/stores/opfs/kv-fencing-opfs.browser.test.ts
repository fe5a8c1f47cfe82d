/**
 * The fencing suite over OpfsObjectStore on both WAL paths. Each store lives in a dedicated
 * worker (see opfs-worker-client.ts); the newer writers' stores live in a second worker on the
 * same directory, as a second tab's would, so an older writer's open log segment (an exclusive
 * sync access handle in the first worker) is read and sealed across workers.
 */
import { afterAll } from 'vitest';
import { OpfsWorkerClient } from './opfs-worker-client.js';
import { describeFencingSuite } from '../../core/kv/fencing.suite.js';

let counter = 0;
for (const appendLogs of [true, false]) {
  const first = new OpfsWorkerClient();
  const second = new OpfsWorkerClient();
  afterAll(() => {
    first.terminate();
    second.terminate();
  });
  describeFencingSuite(`opfs (two dedicated workers, ${appendLogs ? 'append-log WAL' : 'WAL objects'})`, async () => {
    const directory = `taquba-test/kv-fence-${Date.now().toString(36)}-${counter++}`;
    const store = await first.open(directory, undefined, { appendLogs });
    const other = await second.open(directory, undefined, { appendLogs });
    return {
      store,
      another: () => other,
      cleanup: async () => {
        await store.close().catch(() => undefined);
        await other.close().catch(() => undefined);
        await first.call('deleteDirectory', directory).catch(() => undefined);
      },
    };
  });
}
