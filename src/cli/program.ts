/**
 * The argument parser (commander): global options, one subcommand per view or operation, and the
 * mapping of every failure to one line on stderr and an exit code.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_MEMO_PREFIX } from '../core/workflow/constants.js';
import { DEAD_STEP_PAGE_MAX } from '../core/workflow/history/inspection.js';
import { CliError, errorLine, EXIT_USAGE, toCliError, usageError } from './cli-error.js';
import { cancelCommand, deadCommand, queuesCommand, retryCommand, runCommand, runsCommand, signalCommand, watchCommand, type GlobalOptions, type Io } from './commands.js';
import { errorDocument } from './json.js';
import { scheduleAddCommand, scheduleRemoveCommand, schedulesCommand } from './schedules.js';
import { exportCommand, importCommand } from './archive-commands.js';

function integer(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number in ${min}..${max}.`);
    return n;
  };
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

export function buildProgram(io: Io): Command {
  const program = new Command('taquba');
  const globals = (cmd: Command): GlobalOptions => cmd.optsWithGlobals<GlobalOptions>();
  program
    .description('Inspect a taquba-workflow store beside its live writer (read-only), and signal, cancel or retry through that writer (or as the writer when none runs).')
    .addOption(new Option('-s, --store <location>', 'store: a directory, or s3://bucket/prefix').env('TAQUBA_STORE').default('./.taquba'))
    .addOption(new Option('-p, --path <path>', "engine path in the store (Queue.open's path); default: app, else the only engine found").env('TAQUBA_PATH'))
    .addOption(new Option('-q, --queue <name>', "the runtime's queueName; default: every queue of the store").env('TAQUBA_QUEUE'))
    .addOption(new Option('--memo-prefix <prefix>', "the runtime's memoPrefix").default(DEFAULT_MEMO_PREFIX))
    .option('--endpoint <url>', 'S3 endpoint (default: AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS)')
    .option('--region <region>', 'S3 region (default: AWS_REGION, else us-east-1)')
    .option('--force-path-style', 'S3 path-style addressing (MinIO and most emulators)')
    .option('--json', 'machine output: one JSON document (schema taquba-cli/1, see docs/cli.md)')
    .option('--debug', 'print the stack of an error')
    .showHelpAfterError(false)
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: () => undefined })
    .exitOverride();

  program
    .command('runs')
    .description('active runs: state, current step, what they wait for, attempts, age; finished runs (still kept) with --status succeeded,failed,cancelled')
    .option(
      '--status <states>',
      'only these states (comma-separated or repeated), of active runs: pending, scheduled, waiting-for-signal, waiting-for-slot, running, cancelling, dead; or of finished runs: succeeded, failed, cancelled (not both)',
      collect,
    )
    .option('--limit <n>', 'page size', integer(0), 50)
    .option('--after <cursor>', 'the cursor a previous page printed')
    .action((local, cmd: Command) => runsCommand(io, globals(cmd), local));

  program
    .command('run')
    .description("one run's timeline: steps, tries, errors, durations, signals, memo entries, KV effects, outcome")
    .argument('<id>', 'run id')
    .action((id: string, _local, cmd: Command) => runCommand(io, globals(cmd), id));

  program
    .command('dead')
    .description('dead steps (out of attempts, permanent errors, failed notifications) with their last error')
    .option('--limit <n>', 'page size (1..1000)', integer(1, DEAD_STEP_PAGE_MAX), 50)
    .option('--after <jobId>', 'the last job id of the previous page')
    .action((local, cmd: Command) => deadCommand(io, globals(cmd), local));

  program
    .command('queues')
    .description('job counts per queue and state')
    .action((_local, cmd: Command) => queuesCommand(io, globals(cmd)));

  const schedules = program.command('schedules').description('cron schedules kept in the store (list, the default), and adding or removing one through the live writer');
  schedules
    .command('list', { isDefault: true })
    .description('cron schedules kept in the store: expression, zone, target, next and last firing')
    .action((_local, cmd: Command) => schedulesCommand(io, globals(cmd)));
  schedules
    .command('add')
    .description("add a schedule starting a workflow function of the live application (through its runtime inbox; it checks the workflow); stored: it survives restarts")
    .argument('<name>', 'schedule name (1..100 of [A-Za-z0-9_-])')
    .requiredOption('--cron <expression>', '5-field POSIX cron: minute hour day-of-month month day-of-week')
    .option('--tz <zone>', 'IANA time zone the expression is read in (default UTC)')
    .requiredOption('--workflow <name>', 'the workflow function each firing starts: name (newest version) or name@version')
    .option('--input <json>', "the workflow's input, as JSON")
    .option('--replace', 'replace a schedule of this name stored with another definition (default: CONFLICT)')
    .option('--force', 'as for signal')
    .option('--timeout <seconds>', 'as for signal', integer(1), 30)
    .option('--command-id <id>', 'as for signal')
    .action((name: string, local, cmd: Command) => scheduleAddCommand(io, globals(cmd), name, local));
  schedules
    .command('remove')
    .description('remove a schedule: no firing from then on (through the live writer, or as its writer when none runs)')
    .argument('<name>', 'schedule name')
    .option('--force', 'as for signal')
    .option('--timeout <seconds>', 'as for signal', integer(1), 30)
    .option('--command-id <id>', 'as for signal')
    .action((name: string, local, cmd: Command) => scheduleRemoveCommand(io, globals(cmd), name, local));

  program
    .command('watch')
    .description('follow runs and queue counts live until Ctrl-C')
    .option('--interval <ms>', 'poll interval', integer(50), 1000)
    .option('--max-runs <n>', 'most runs followed', integer(1), 1000)
    .action((local, cmd: Command) => watchCommand(io, globals(cmd), local));

  program
    .command('signal')
    .description("send a durable signal (through the store's live writer, or as its writer when none runs)")
    .argument('<key>', 'correlation key')
    .argument('<payload>', 'payload (UTF-8 text, or base64 with --base64)')
    .option('--base64', 'the payload is base64')
    .option('--force', 'on a store without a writer lock (S3), open a writer even though one may be live (fencing it)')
    .option('--timeout <seconds>', 'how long to wait for a live writer to answer', integer(1), 30)
    .option('--command-id <id>', 'the id a TIMEOUT named: send the same command again (applied once)')
    .action((key: string, payload: string, local, cmd: Command) => signalCommand(io, globals(cmd), key, payload, local));

  program
    .command('cancel')
    .description("cancel an active run (through the store's live writer, or as its writer when none runs)")
    .argument('<id>', 'run id')
    .option('--force', 'as for signal')
    .option('--timeout <seconds>', 'as for signal', integer(1), 30)
    .option('--command-id <id>', 'as for signal')
    .action((id: string, local, cmd: Command) => cancelCommand(io, globals(cmd), id, local));

  program
    .command('retry')
    .description("re-enqueue a dead step job (through the store's live writer, or as its writer when none runs)")
    .argument('<jobId>', 'dead job id (from taquba dead)')
    .option('--force', 'as for signal')
    .option('--timeout <seconds>', 'as for signal', integer(1), 30)
    .option('--command-id <id>', 'as for signal')
    .action((jobId: string, local, cmd: Command) => retryCommand(io, globals(cmd), jobId, local));

  program
    .command('export')
    .description('write a run as a portable archive file (a copy; --hand-off moves it: this store stops running it)')
    .argument('<runId>', 'run id')
    .option('--out <file>', 'the archive file (default <runId>.taquba-run)')
    .option('--hand-off', "move the run (as the store's writer; only between steps): import the file elsewhere to continue it")
    .option('--to <where>', 'with --hand-off: where the run goes, kept here and shown as its status')
    .option('--kv <key>', 'a caller-KV key the run needs elsewhere (repeatable)', collect)
    .option('--force', 'as for signal')
    .action((runId: string, local, cmd: Command) => exportCommand(io, globals(cmd), runId, local));

  program
    .command('import')
    .description("continue an exported run in this store (as its writer; once per archive), on --queue or the queue it left")
    .argument('<file>', 'the archive file taquba export wrote')
    .option('--run-id <id>', "the run's id here (default: a hand-off's own id, a new id for a copy)")
    .option('--force', 'as for signal')
    .action((file: string, local, cmd: Command) => importCommand(io, globals(cmd), file, local));

  return program;
}

/** Commander's own errors as usage errors (its messages start with `error: `). */
function fromCommander(e: CommanderError): CliError {
  const message = e.message.replace(/^error:\s*/, '');
  return usageError(message, 'see taquba --help');
}

/**
 * Runs the CLI on `argv` (without the node and script entries). Resolves with the exit code; the
 * only output on failure is one line on stderr (plus the stack with --debug).
 */
export async function runCli(argv: readonly string[], io: Io, err: (line: string) => void): Promise<number> {
  const program = buildProgram(io);
  try {
    if (argv.length === 0) {
      program.outputHelp();
      return EXIT_USAGE;
    }
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (e) {
    if (e instanceof CommanderError && (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version')) return 0;
    const failure = e instanceof CommanderError ? fromCommander(e) : toCliError(e);
    const opts = program.opts<{ json?: boolean; debug?: boolean }>();
    err(opts.json ? errorDocument(failure.code, failure.message, failure.hint) : errorLine(failure));
    if (opts.debug) err(String((failure.cause instanceof Error ? failure.cause : failure).stack));
    return failure.exitCode;
  }
}
