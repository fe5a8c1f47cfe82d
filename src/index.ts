/**
 * `taquba-workflow`: the platform-neutral public API (runs in browsers, workers and Node).
 *
 * Each layer's index lists its public names explicitly; this root entry re-exports those lists
 * whole, so a name is public exactly when its layer says so. Platform pieces live in subpath
 * entries: `taquba-workflow/node` (filesystem store, process lock), `taquba-workflow/browser`
 * and `taquba-workflow/browser/worker` (the Web Worker host and its client),
 * `taquba-workflow/stores/indexeddb`, `/stores/opfs`, `/stores/s3`.
 */
export * from './core/errors.js';
export { SystemClock, MockClock, systemClock, type Clock } from './core/clock.js';
export { consoleLogger, type Logger, type LogFields, type LoggerOption } from './core/logger.js';
export * from './core/objects/index.js';
export * from './core/kv/index.js';
export * from './core/queue/index.js';
export * from './core/workflow/index.js';
