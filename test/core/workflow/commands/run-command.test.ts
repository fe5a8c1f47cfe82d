/**
 * The stored command records (format 1): the dead-step retry is stored under the type it was first
 * written with (`retryDeadJob`), so appliers of either version read each other's batches.
 */
import { describe, expect, it } from 'vitest';
import { decodeKindRecord, encodeKindRecord } from '../../../../src/core/kind-records.js';
import { decodeCommands, encodeCommands, type RunCommand } from '../../../../src/core/workflow/commands/run-command.js';

const KEY = 'app/commands/q/inbox/batch-1';

describe('command records', () => {
  it('store the dead-step retry as retryDeadJob and read it back as retryDeadStep', () => {
    const commands: RunCommand[] = [
      { type: 'retryDeadStep', jobId: 'job-1', commandId: 'c-1' },
      { type: 'cancel', runId: 'run-1' },
    ];
    const bytes = encodeCommands(commands);
    expect(decodeKindRecord(bytes, KEY, 'command', 1, 'command object').commands).toEqual([
      { type: 'retryDeadJob', jobId: 'job-1', commandId: 'c-1' },
      { type: 'cancel', runId: 'run-1' },
    ]);
    expect(decodeCommands(bytes, KEY)).toEqual(commands);
  });

  it('refuse a batch with a type no version wrote, or a bad command id', () => {
    for (const command of [{ type: 'retryDeadStep', jobId: 'job-1' }, { type: 'reboot' }, { type: 'cancel', runId: 'r', commandId: 7 }, null]) {
      const bytes = encodeKindRecord('command', 1, { commands: [command] });
      expect(() => decodeCommands(bytes, KEY), JSON.stringify(command)).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA' }));
    }
  });
});
