/**
 * Bulk pipelines: one `Pipeline` of named, memoized phases over many inputs (`Bulk`), with a
 * durable batch per id (`Batch`: progress, cost rollup, results streamed in completion order from
 * a resumable cursor, a failure policy). Every item is a single-step workflow run; the batch's
 * state is caller KV under `workflow/bulk/` in the queue's store, so it survives a crash.
 *
 * Errors: INVALID_ARGUMENT (`invalid_pipeline`, `invalid_batch_id`, `duplicate_item_key`,
 * `invalid_item_key`, `invalid_item`, `invalid_policy`, `invalid_spec`, `invalid_cursor`,
 * `invalid_cost`), INVALID_CONFIG (options), INPUT_MISMATCH (`batch_mismatch`), NOT_FOUND
 * (`batch_not_found`), PRECONDITION_FAILED (`batch_running`), CANCELLED (driving stopped by a
 * shutdown), and the runtime's CLOSED / FENCED / CORRUPT_DATA / STORE_*. I/O: `readJsonl` throws
 * INVALID_ARGUMENT (`invalid_source`) and yields bad lines as items (`invalid_jsonl_line`);
 * `JsonlSink` throws INVALID_ARGUMENT (`invalid_sink`, `unserializable_output`).
 */
export { Bulk, DEFAULT_BULK_QUEUE_NAME, type BatchResumeOptions, type BatchStatus, type BatchSubmitOptions, type BulkOptions } from './bulk.js';
export { readJsonl, type JsonlItem, type JsonlReadableStream, type JsonlSource, type JsonlStreamReader, type ReadJsonlOptions } from './jsonl-reader.js';
export { JsonlSink, NullSink, type JsonlStreamWriter, type JsonlTarget, type JsonlWritableStream, type OutputRecord, type OutputSink } from './output-sink.js';
export { Batch, type BatchResultsOptions } from './batch.js';
export { Pipeline, pipeline, type PhaseContext, type PhaseRun } from './pipeline.js';
export type { CostReport, CostRollup, PhaseCosts } from './cost.js';
export type { BatchCounts, BatchOutcome, BatchProgress, BatchReport, ItemResult } from './progress.js';
export type { FailurePolicy, ItemStatus } from './records.js';
