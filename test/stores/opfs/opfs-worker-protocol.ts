/**
 * Messages between the page-side test client and the OPFS worker harness. Test-only: the real
 * worker host (src/browser) has its own protocol.
 */
import type { ErrorCode, ErrorDetails } from '../../../src/core/errors.js';

export interface HarnessRequest {
  readonly id: number;
  readonly op: string;
  readonly args: readonly unknown[];
}

/** An error flattened for postMessage: library errors keep code and details, causes keep their name. */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly code?: ErrorCode;
  readonly details?: ErrorDetails;
  readonly cause?: { readonly name: string; readonly message: string };
}

export type HarnessResponse = { readonly id: number; readonly ok: true; readonly result: unknown } | { readonly id: number; readonly ok: false; readonly error: WireError };

/** Rates measured inside the worker, in operations per second. */
export interface WorkerRates {
  readonly rawWriteFlushPerSec: number;
  readonly createPutsPerSec: number;
  readonly overwritePutsPerSec: number;
  readonly getsPerSec: number;
}
