/**
 * The `Step` a runner receives from the runtime. The memo handles, the KV read handle and the
 * effects handle are created on first use, so a step that never touches them costs nothing for
 * them. Once the runner returned the step is sealed: its effects handle (even one first asked for
 * afterwards) refuses staging.
 */
import type { LeaseHandle } from '../../queue/index.js';
import type { HandlerSlot } from '../../queue/workers/handler-slots.js';
import type { RuntimeContext } from '../context.js';
import { EffectsHandle, NO_KV_EFFECTS, type StagedKvEffects } from './effects-handle.js';
import type { Memo } from './memo.js';
import { KvReadHandle, type Step } from './step.js';

export class DeliveredStep implements Step {
  private memoHandle: Memo | undefined;
  private runMemoHandle: Memo | undefined;
  private kvHandle: KvReadHandle | undefined;
  private effectsHandle: EffectsHandle | undefined;
  private sealed = false;

  constructor(
    private readonly ctx: RuntimeContext,
    readonly runId: string,
    readonly stepNumber: number,
    readonly payload: Uint8Array,
    readonly headers: Readonly<Record<string, string>>,
    readonly jobId: string,
    readonly attempt: number,
    readonly maxAttempts: number,
    readonly interruptions: number,
    readonly signalPayload: Uint8Array | null,
    private readonly cancel: { readonly signal: AbortSignal; readonly cancelRequested: boolean },
    readonly lease: LeaseHandle,
    /** @internal Fires when the worker loop running this delivery stops (`shutdown`): long runners may hand the rest of the run back to the queue. */
    readonly workerStopping?: AbortSignal,
    /** @internal The worker loop's slot of this delivery: a workflow function gives it up while it waits for a history write to be durable. */
    readonly slot?: HandlerSlot,
  ) {}

  /** The delivery's cancel signal, created on first read (most runners never look at it). */
  get signal(): AbortSignal {
    return this.cancel.signal;
  }

  /** @internal `signal.aborted` without creating the signal. */
  get cancelRequested(): boolean {
    return this.cancel.cancelRequested;
  }

  get memo(): Memo {
    return (this.memoHandle ??= this.ctx.memo.newMemo(this.runId, this.stepNumber));
  }

  get runMemo(): Memo {
    return (this.runMemoHandle ??= this.ctx.memo.newRunMemo(this.runId));
  }

  get kv(): KvReadHandle {
    return (this.kvHandle ??= new KvReadHandle(this.ctx.queue));
  }

  get effects(): EffectsHandle {
    if (!this.effectsHandle) {
      this.effectsHandle = new EffectsHandle();
      if (this.sealed) this.effectsHandle.seal();
    }
    return this.effectsHandle;
  }

  /** Seals the step and returns what it staged for the outcome and for a failing settlement. */
  seal(): { staged: StagedKvEffects; onFailure: StagedKvEffects } {
    this.sealed = true;
    const fx = this.effectsHandle;
    if (!fx) return { staged: NO_KV_EFFECTS, onFailure: NO_KV_EFFECTS };
    fx.seal();
    return { staged: fx.staged(), onFailure: fx.stagedOnFailure() };
  }
}
