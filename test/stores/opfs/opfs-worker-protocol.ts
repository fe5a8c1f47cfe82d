/**
 * Data shapes of the OPFS worker harness that the page reads. The calls themselves are the
 * harness object (`OpfsHarness` in opfs-worker-harness.ts), wrapped with Comlink on the page.
 * Test-only: the real worker host (src/browser) has its own protocol.
 */

/** Rates measured inside the worker, in operations per second. */
export interface WorkerRates {
  readonly rawWriteFlushPerSec: number;
  readonly createPutsPerSec: number;
  readonly overwritePutsPerSec: number;
  readonly getsPerSec: number;
}
