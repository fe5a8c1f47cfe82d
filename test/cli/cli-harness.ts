/**
 * Runs the CLI from source as a child process (the sources bundled once, see
 * test/support/node-script.ts, and run by node, as `npx taquba` runs the built file)
 * or, for the many read calls of a test, in this process through `runCli` (same program, no
 * process start per call), and starts the live writer of test/cli/live-writer.ts beside it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/program.js';
import { nodeScript } from '../support/node-script.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const WRITER = fileURLToPath(new URL('./live-writer.ts', import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment without the colour switches of the test runner's own terminal. */
export function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.FORCE_COLOR;
  delete env.NO_COLOR;
  delete env.TAQUBA_STORE;
  delete env.TAQUBA_PATH;
  delete env.TAQUBA_QUEUE;
  return { ...env, ...extra };
}

function node(script: string, args: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...nodeScript(script), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** One CLI invocation to its end. */
export function cli(args: readonly string[], env: NodeJS.ProcessEnv = plainEnv()): Promise<CliResult> {
  const child = node(MAIN, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** One CLI invocation in this process: `runCli` with the process wiring of main.ts replaced (stdout not a TTY). */
export async function cliHere(args: readonly string[], env: NodeJS.ProcessEnv = plainEnv()): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io = { out: (text: string) => void (stdout += `${text}\n`), env, isTty: false, stop: new AbortController().signal, now: () => Date.now() };
  const code = await runCli(args, io, (line) => void (stderr += `${line}\n`));
  return { code, stdout, stderr };
}

/** A CLI invocation that keeps running (`watch`): its stdout lines as they come, and a way to stop it. */
export function cliProcess(args: readonly string[], env: NodeJS.ProcessEnv = plainEnv()) {
  const child = node(MAIN, args, env);
  return { child, ...lineReader(child) };
}

/** Whether the child has exited: with a code, or killed by a signal (then `exitCode` stays null). */
function ended(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function lineReader(child: ChildProcess) {
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  /** The first line (from index `from`) that matches, waiting up to `timeoutMs`. */
  async function waitForLine(match: (line: string) => boolean, timeoutMs = 60_000, from = 0): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Once the child ended, its last lines are read when its stdout closes (`exited`).
      const over = ended(child);
      if (over) await exited;
      const found = lines.slice(from).find(match);
      if (found !== undefined) return found;
      if (over || Date.now() > deadline) throw new Error(`no matching line; stdout=${lines.join('\n')} stderr=${stderr}`);
      // Woken by the next stdout chunk; the timer only rechecks the deadline and the child's exit.
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  }
  return { lines, waitForLine, exited, stderr: () => stderr };
}

/**
 * The live writer on `args` (`fs <root>` or `s3 <endpoint> <bucket> <prefix>`), once it printed
 * `ready`: test/cli/live-writer.ts, or the child `script` (which prints `ready` and `closed` too).
 */
export async function startWriter(args: readonly string[], env: NodeJS.ProcessEnv = plainEnv(), script = WRITER) {
  const child = node(script, args, env);
  const reader = lineReader(child);
  await reader.waitForLine((l) => l === 'ready', 90_000);
  return {
    pid: child.pid!,
    /** SIGTERM and wait for the clean close (lock released, closing heartbeat written). */
    async stop(): Promise<void> {
      if (ended(child)) return;
      child.kill('SIGTERM');
      await reader.waitForLine((l) => l === 'closed', 30_000).catch(() => undefined);
      await reader.exited;
    },
    /** SIGKILL: no clean close, no closing heartbeat (a crash). */
    async kill(): Promise<void> {
      if (ended(child)) return;
      child.kill('SIGKILL');
      await reader.exited;
    },
  };
}

/** The one JSON document a command printed. */
export function json(result: CliResult): Record<string, any> {
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, any>;
}

/** Every failure is one line on stderr, with no stack frames. */
export function oneLine(result: CliResult): string {
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  if (lines.length !== 1) throw new Error(`expected one stderr line, got ${lines.length}: ${result.stderr}`);
  if (/^\s+at /m.test(result.stderr)) throw new Error(`stack trace on stderr: ${result.stderr}`);
  return lines[0];
}
