/**
 * An async iterator fed by pushes (a subscription's callback): what was pushed is read in order;
 * `end` (or the reader's `return`) stops it once that is read, `fail` makes the next read past it
 * throw once. `cleanup` runs once, at the first end (unsubscribe, remove listeners). The page
 * client's and the HTTP client's event streams are both one of these.
 */
export interface PushStream<T> {
  readonly iterator: AsyncIterableIterator<T>;
  push(value: T): void;
  end(): void;
  fail(error: unknown): void;
}

export function pushStream<T>(cleanup: () => void): PushStream<T> {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: { readonly error: unknown } | undefined;
  const end = (): void => {
    if (done) return;
    done = true;
    cleanup();
    wake?.();
  };
  const iterator: AsyncIterableIterator<T> = {
    async next(): Promise<IteratorResult<T>> {
      for (;;) {
        if (queue.length > 0) return { value: queue.shift()!, done: false };
        if (failure) {
          const { error } = failure;
          failure = undefined;
          throw error;
        }
        if (done) return { value: undefined, done: true };
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
    async return(): Promise<IteratorResult<T>> {
      end();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return {
    iterator,
    push(value) {
      queue.push(value);
      wake?.();
    },
    end,
    fail(error) {
      failure = { error };
      end();
    },
  };
}
