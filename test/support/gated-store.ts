/**
 * A store wrapper that holds writes: while a hold is active, puts (those `holds` selects) wait,
 * and go on in arrival order when it is released, or fail (a writer that died before they
 * landed). For tests that need a commit in flight: what is visible, settled or durable before it
 * lands. Reads, deletes and lists pass straight through.
 */
import type { ObjectStore } from '../../src/core/objects/object-store.js';

/** The puts of one hold: let them through, or fail them. */
export interface HeldPuts {
  release(): void;
  fail(): void;
}

export interface GatedStoreOptions {
  /** Which puts a hold holds (default: every put). */
  readonly holds?: (key: string) => boolean;
}

/**
 * Only the four required methods, as the wrappers it replaces had: a store's `deleteMany` or
 * `lockWriter` is not offered, so callers take the same paths on every store.
 */
export class GatedStore<S extends ObjectStore = ObjectStore> implements ObjectStore {
  private gate: Promise<boolean> | undefined;
  private current: HeldPuts | undefined;
  private readonly holds: (key: string) => boolean;
  /** Puts that had to wait at a hold. */
  heldPuts = 0;

  constructor(
    readonly inner: S,
    options: GatedStoreOptions = {},
  ) {
    this.holds = options.holds ?? (() => true);
  }

  /** True while a hold is active. */
  get held(): boolean {
    return this.gate !== undefined;
  }

  /** Holds the selected puts from now on; while a hold is active, returns that hold. */
  hold(): HeldPuts {
    if (this.current) return this.current;
    let open!: (ok: boolean) => void;
    this.gate = new Promise<boolean>((r) => (open = r));
    const end = (ok: boolean): void => {
      if (this.current !== held) return;
      this.gate = undefined;
      this.current = undefined;
      open(ok);
    };
    const held: HeldPuts = { release: () => end(true), fail: () => end(false) };
    this.current = held;
    return held;
  }

  /** Lets the puts of the active hold through (nothing when none is active). */
  release(): void {
    this.current?.release();
  }

  get: ObjectStore['get'] = (key, options) => this.inner.get(key, options);
  delete: ObjectStore['delete'] = (key) => this.inner.delete(key);
  list: ObjectStore['list'] = (prefix, options) => this.inner.list(prefix, options);
  put: ObjectStore['put'] = async (key, data, options) => {
    if (this.gate && this.holds(key)) {
      this.heldPuts++;
      // A hold taken again while this put waited holds it again.
      while (this.gate) {
        if (!(await this.gate)) throw new Error('the held put failed (the writer died)');
      }
    }
    return this.inner.put(key, data, options);
  };
}
