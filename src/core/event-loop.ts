/**
 * Turns of the event loop, for loops that could otherwise run on microtasks alone: over a store
 * that answers at once (the memory store) back-to-back WAL puts or deletes would be one unbroken
 * microtask chain, and timers (lease keepers, the reaper, a caller's own) would wait for it to
 * run out of work. Every settlement commits, so the WAL writer's turns pace a busy worker loop too.
 */

interface TurnGlobals {
  setImmediate?: (f: () => void) => void;
  MessageChannel?: new () => { port1: { onmessage: (() => void) | null }; port2: { postMessage(m: unknown): void } };
}

let postTurn: ((f: () => void) => void) | undefined;

/** A `MessageChannel` message per turn: browsers clamp nested `setTimeout(0)` to 4 ms. */
function messageTurns(g: TurnGlobals): ((f: () => void) => void) | undefined {
  if (postTurn === undefined && g.MessageChannel) {
    const channel = new g.MessageChannel();
    const waiting: (() => void)[] = [];
    channel.port1.onmessage = () => waiting.shift()?.();
    postTurn = (f) => {
      waiting.push(f);
      channel.port2.postMessage(null);
    };
  }
  return postTurn;
}

/**
 * Resolves after a turn of the event loop: I/O callbacks pending by then have run, and timers
 * due by then run within two consecutive turns (Node may reach its check phase, where
 * `setImmediate` callbacks run, before it comes back to its timers).
 * Not a Clock sleep: it takes no time, so a MockClock must not hold it. `setImmediate` where
 * there is one (Node: no 1 ms like its `setTimeout(0)`; a cluster's dozen loops per MockClock
 * advance once made that most of their tests' time), else a `MessageChannel` message, else
 * `setTimeout(0)`. Looked up at each call, so the simulator's stand-ins for these globals drive it.
 */
export function yieldToEventLoop(): Promise<void> {
  const g = globalThis as unknown as TurnGlobals;
  return new Promise((resolve) => {
    if (g.setImmediate) return g.setImmediate(resolve);
    const post = messageTurns(g);
    if (post) post(resolve);
    else setTimeout(resolve, 0);
  });
}
