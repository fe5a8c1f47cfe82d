/**
 * Reads `keys` with up to `ahead` reads in flight and hands each result to `use` in the keys'
 * order, one at a time. Replaying a store's WAL objects one GET after another made an open on S3
 * cost one round trip per object (tens of ms each); the reads are independent, the applying is
 * not. When a read or `use` fails, the reads still in flight are left to settle unobserved.
 */
export async function readInOrder<K, V>(keys: readonly K[], ahead: number, read: (key: K) => Promise<V>, use: (key: K, value: V) => Promise<void> | void): Promise<void> {
  const inFlight: Promise<V>[] = [];
  let next = 0;
  for (const key of keys) {
    while (next < keys.length && inFlight.length < ahead) {
      const pending = read(keys[next++]!);
      pending.catch(() => undefined); // observed when its turn comes; not if an earlier one failed
      inFlight.push(pending);
    }
    await use(key, await inFlight.shift()!);
  }
}
