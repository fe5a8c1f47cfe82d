/**
 * `taquba-workflow/http`: a store's runtime operations over HTTP, for Node. `serveHttp(host)`
 * serves a `RuntimeHost` (or any `RuntimeOperations`) on `node:http`; `connectHttp(url)` is its
 * client, with the worker client's typed API (`submit`, `status`, `signal`, `result`, `listRuns`,
 * `start(workflow, input)`, typed jobs, a run's events), in Node here and in a page from
 * `taquba-workflow/browser`. The wire format is in wire.ts.
 */
export { serveHttp } from './server/serve-http.js';
export type { CloseHttpOptions, HttpRuntimeServer, ServeHttpOptions } from './server/serve-http.js';
export { connectHttp } from './client/connect-http.js';
export type { ConnectHttpOptions, HttpEventFilter, HttpWorkflowClient } from './client/connect-http.js';
export type { HttpRunEvent, RunStatusEvent, TerminalRunEvent } from './wire.js';
