/**
 * Runs a TypeScript file as a real Node process (`node --import tsx`), collecting its stdout by
 * line, for the crash and example tests. A `signal` rule sends a signal once, at the first line
 * (with all lines so far) it accepts; a guard SIGKILLs a process that runs past `timeoutMs`.
 */
import { spawn } from 'node:child_process';

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
}

export function runScript(script: string, args: readonly string[], options: RunScriptOptions = {}): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
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
