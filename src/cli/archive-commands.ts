/**
 * `taquba export` and `taquba import`: a run as a portable archive file (docs/rfcs/0004-run-archive.md).
 *
 * A copy is read with a read-only reader, so it runs beside a live writer. A hand-off and an
 * import change the store: they open it as its writer for the one operation, and are refused
 * (LOCKED) while a live writer holds it (its command inbox does not carry them yet): stop the
 * writer, or call `exportRun` / `importRun` on the application's runtime.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { isTaqubaError } from '../core/errors.js';
import type { ObjectStore } from '../core/objects/object-store.js';
import type { Queue } from '../core/queue/index.js';
import { describeRunArchive, type RunArchiveSummary } from '../core/workflow/archive/archive-format.js';
import { exportRunCopy } from '../core/workflow/archive/export-run.js';
import { DEFAULT_QUEUE_NAME } from '../core/workflow/constants.js';
import { createRunIdGenerator } from '../core/workflow/runs/run-ids.js';
import { WorkflowRuntime } from '../core/workflow/runtime.js';
import { StepError } from '../core/workflow/steps/step-error.js';
import type { TerminalHook } from '../core/workflow/runs/terminal-hook.js';
import { CliError, EXIT_FAILURE, usageError } from './cli-error.js';
import type { GlobalOptions, Io } from './commands.js';
import { document } from './json.js';
import { findActiveRun, readersFor, selectQueues } from './queues.js';
import { openReader, openStore, openWriter, type OpenedStore } from './store.js';

/** The file an export writes when `--out` names none. */
export const archiveFileName = (runId: string): string => `${runId}.taquba-run`;

interface ExportOptions {
  readonly out?: string;
  readonly handOff?: boolean;
  readonly to?: string;
  readonly kv?: string[];
  readonly force?: boolean;
}

/** A runtime for one operation (no `run`): its runner and hook are never called; the application's runtime runs the run. */
function operatorRuntime(queue: Queue, store: ObjectStore, options: GlobalOptions, queueName: string): WorkflowRuntime {
  const refuse = async (): Promise<never> => {
    throw StepError.transient('the taquba CLI does not run steps');
  };
  const hook: TerminalHook = { onTermination: refuse };
  return new WorkflowRuntime(queue, store, refuse, hook, { queueName, memoPrefix: options.memoPrefix, logger: false, commandPollMs: null });
}

/** The store opened as its writer for `use`; LOCKED while a live writer holds it. */
async function asWriter<T>(options: GlobalOptions, force: boolean, what: string, use: (queue: Queue, opened: OpenedStore, path: string) => Promise<T>): Promise<T> {
  const opened = await openStore(options);
  try {
    const access = await openWriter(opened, options, force);
    if (access.kind === 'live') {
      throw new CliError(
        'LOCKED',
        `${what} changes the store, and a live writer holds it. ${access.why}`,
        `stop the writer and run this again, or call it on the application's runtime (runtime.exportRun / runtime.importRun)${opened.hasWriterLock ? '' : '; if no process writes this store, add --force'}`,
      );
    }
    try {
      return await use(access.queue, opened, access.path);
    } finally {
      await access.queue.close();
    }
  } finally {
    opened.close();
  }
}

/** Library errors of an archive file, with hints about the file rather than the store. */
function archiveFileError(e: unknown, file: string): unknown {
  if (isTaqubaError(e, 'CORRUPT_DATA') && e.details.reason === 'damaged_archive') {
    return new CliError('CORRUPT_DATA', `${e.message}. file=${JSON.stringify(file)}`, 'the file is not an intact run archive (truncated or altered); export the run again', EXIT_FAILURE, { cause: e });
  }
  if (isTaqubaError(e, 'INVALID_ARGUMENT') && e.details.reason === 'archive_version') {
    return new CliError('INVALID_ARGUMENT', e.message, 'upgrade taquba-workflow to import it', EXIT_FAILURE, { cause: e });
  }
  return e;
}

function summaryLine(s: RunArchiveSummary): string {
  const to = s.to === null ? '' : ` to ${s.to}`;
  return `step ${s.step} (${s.state}), ${s.kind === 'function' ? 'workflow function' : 'StepRunner'} run, archive ${s.archiveId}${s.handOff ? `, hand-off${to}` : ', copy'}`;
}

export async function exportCommand(io: Io, options: GlobalOptions, runId: string, local: ExportOptions): Promise<void> {
  if (local.to !== undefined && !local.handOff) throw usageError('--to names where a hand-off goes', 'add --hand-off');
  const file = local.out ?? archiveFileName(runId);
  const kvKeys = local.kv ?? [];
  let archive: Uint8Array;
  let queueName: string;
  let path: string;
  if (local.handOff) {
    ({ archive, queueName, path } = await asWriter(options, local.force ?? false, 'a hand-off', async (queue, opened, enginePath) => {
      const names = await selectQueues(queue, options.queue);
      const runtimes = names.map((name) => operatorRuntime(queue, opened.store, options, name));
      const found = await Promise.all(runtimes.map((r) => r.getRun(runId)));
      // Not active on any queue: the one named, else the default (a moved run's kept archive, or NOT_FOUND).
      const index = found.findIndex((run) => run !== null);
      const runtime = index >= 0 ? runtimes[index]! : operatorRuntime(queue, opened.store, options, options.queue ?? DEFAULT_QUEUE_NAME);
      const bytes = await runtime.exportRun(runId, { handOff: true, kvKeys, ...(local.to === undefined ? {} : { to: local.to }) });
      return { archive: bytes, queueName: runtime.queueName, path: enginePath };
    }));
  } else {
    const opened = await openStore(options);
    try {
      const { reader, path: enginePath } = await openReader(opened, options);
      try {
        const readers = readersFor(reader, await selectQueues(reader.queue, options.queue));
        const source = (await findActiveRun(readers, runId)) ?? readers[0] ?? reader;
        const stamp = { nextArchiveId: createRunIdGenerator(), now: () => io.now() };
        archive = await exportRunCopy(source.queue, opened.store, { queueName: source.queueName, memoPrefix: options.memoPrefix }, stamp, runId, { kvKeys });
        queueName = source.queueName;
        path = enginePath;
      } finally {
        await reader.close();
      }
    } finally {
      opened.close();
    }
  }
  await writeFile(file, archive);
  const summary = await describeRunArchive(archive);
  io.out(
    options.json
      ? document('export', { store: options.store, path, queue: queueName, nowMs: io.now() }, { runId, file, bytes: archive.length, archive: summary })
      : `run ${runId} exported to ${file} (${archive.length} bytes): ${summaryLine(summary)}${summary.handOff ? '; this store no longer runs it' : ''}`,
  );
}

export async function importCommand(io: Io, options: GlobalOptions, file: string, local: { runId?: string; force?: boolean }): Promise<void> {
  const bytes = new Uint8Array(
    await readFile(file).catch((e: unknown) => {
      throw new CliError('NOT_FOUND', `cannot read the archive file. file=${JSON.stringify(file)} reason=${e instanceof Error ? e.message : String(e)}`, 'pass the file taquba export wrote');
    }),
  );
  const summary = await describeRunArchive(bytes).catch((e: unknown) => {
    throw archiveFileError(e, file);
  });
  // The run goes to the queue named, else to the queue it left (its runtime's queue name there).
  const queueName = options.queue ?? summary.queueName;
  const { outcome, path } = await asWriter(options, local.force ?? false, 'an import', async (queue, opened, enginePath) => {
    const runtime = operatorRuntime(queue, opened.store, options, queueName);
    const result = await runtime.importRun(bytes, local.runId === undefined ? {} : { runId: local.runId }).catch((e: unknown) => {
      throw archiveFileError(e, file);
    });
    return { outcome: result, path: enginePath };
  });
  io.out(
    options.json
      ? document('import', { store: options.store, path, queue: queueName, nowMs: io.now() }, { file, ...outcome, archive: summary })
      : outcome.newlyImported
        ? `run ${outcome.runId} imported from ${file}: ${summaryLine(summary)}; it continues at step ${outcome.step} when a runtime on queue ${queueName} runs`
        : `archive ${outcome.archiveId} was imported here already, as run ${outcome.runId}; nothing changed`,
  );
}
