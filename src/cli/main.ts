#!/usr/bin/env node
/**
 * The `taquba` executable (`npx taquba --help`). Wires the process (argv, stdout, stderr, signals,
 * exit code) to `runCli`; everything else lives in the modules beside it.
 */
import { runCli } from './program.js';

// Node prints process warnings over several lines; the CLI keeps stderr to one line per event and
// drops the AWS SDK's notice about future Node versions (nothing a CLI user can act on here).
process.removeAllListeners('warning');
process.on('warning', (w) => {
  if (w.name !== 'NodeVersionSupportWarning' && !w.message.startsWith('NodeVersionSupportWarning')) process.stderr.write(`taquba: warning: ${w.name}: ${w.message.replace(/\s*\n\s*/g, ' ')}\n`);
});

const stop = new AbortController();
const onSignal = (): void => stop.abort();
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);

const code = await runCli(
  process.argv.slice(2),
  {
    out: (text) => process.stdout.write(`${text}\n`),
    env: process.env,
    isTty: process.stdout.isTTY === true,
    stop: stop.signal,
    now: () => Date.now(),
  },
  (line) => process.stderr.write(`${line}\n`),
);
process.exitCode = code;
// Nothing may keep the process alive once the command is done (an SDK socket, a timer).
process.stdout.write('', () => process.exit(code));
