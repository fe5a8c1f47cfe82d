/**
 * What every part of one simulation run shares: the seed, the world, virtual time, the recorded
 * history, the trace and the first violation found.
 */
import type { Violation } from './checker.js';
import type { WriterRecord } from './history.js';
import type { SimWorld } from './sim-world.js';
import type { VirtualTime } from './virtual-time.js';

export interface SimConfig {
  /** Steps before the run winds down (each an action or one delivered store/timer event). */
  readonly steps: number;
  /** Chance that a step is a client action rather than a delivery. */
  readonly actionRate: number;
  /** Writers alive at once (opening, open, or failed but not closed). */
  readonly maxWriters: number;
  readonly readers: boolean;
  /** Chance that a store call fails with STORE_UNAVAILABLE. */
  readonly failRate: number;
  readonly appendLogs: boolean;
  /** With append logs: seal flags offered (see SimStore), so writers watch a flag for their seal. */
  readonly sealFlags: boolean;
  readonly lock: boolean;
  /** Requests of crashed processes may land later (object-store semantics). */
  readonly zombies: boolean;
  readonly crashes: boolean;
  readonly machineCrashes: boolean;
  readonly pauses: boolean;
  readonly txns: boolean;
  /** Damage injection (a separate mode: the loss invariant then accepts CORRUPT_DATA). */
  readonly damage: boolean;
  /** Size of the key space (small: commits overwrite each other). */
  readonly keys: number;
  /** Largest value padding, bytes. */
  readonly maxPad: number;
}

export const PATH = 'kv';

export interface SimContext {
  readonly seed: number;
  readonly config: SimConfig;
  readonly world: SimWorld;
  readonly time: VirtualTime;
  readonly writers: WriterRecord[];
  step: number;
  /** Damage was injected: CORRUPT_DATA is then an accepted answer. */
  damaged: boolean;
  /** The first CORRUPT_DATA seen after damage. */
  detected: string | undefined;
  violation: Violation | undefined;
  trace(line: string): void;
  fail(invariant: string, message: string): void;
  nextPid(): number;
  nextCommitId(): number;
}
