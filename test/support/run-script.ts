/**
 * Runs a TypeScript file as a real Node process (bundled once, see node-script.ts; or through
 * `node --import tsx` with `tsx: true`), collecting its stdout by line, for the crash and example
 * tests. A `signal` rule sends a signal once, at the first line
 * (with all lines so far) it accepts; a guard SIGKILLs a process that runs past `timeoutMs`.
 */
import { spawn } from 'node:child_process';
import { nodeScript } from './node-script.js';

export interface ScriptRun {
  readonly lines: string[];
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  readonly pid: number;
  /** Whether the `signal` rule fired. */
  readonly signalled: boolean;
}

export interface RunScriptOptions {
  readonly env?: Record<string, string>;
  readonly signal?: { readonly on: (line: string, lines: readonly string[]) => boolean; readonly with: NodeJS.Signals };
  readonly timeoutMs?: number;
  /** Run through `node --import tsx` (as `npm run example:*` does) instead of the bundle. */
  readonly tsx?: boolean;
}

export function runScript(script: string, args: readonly string[], options: RunScriptOptions = {}): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeScript(script, { tsx: options.tsx }), ...args], {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let buffer = '';
    let stderr = '';
    let signalled = false;
    const guard = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    proc.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (options.signal && !signalled && options.signal.on(line, lines)) {
          signalled = true;
          proc.kill(options.signal.with);
        }
      }
    });
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (buffer) lines.push(buffer);
      resolve({ lines, code, signal, stderr, pid: proc.pid!, signalled });
    });
  });
}
