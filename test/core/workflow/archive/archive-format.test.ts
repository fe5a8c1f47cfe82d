/**
 * The archive's bytes: a round trip; every truncation and every single-bit flip is CORRUPT_DATA
 * (the header CRC keeps a flipped version bit from reading as a newer format); an intact archive
 * of a newer format is INVALID_ARGUMENT `archive_version` naming both versions; an import of a
 * damaged archive writes nothing; names that would become keys are checked on import.
 */
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../../src/core/bytes.js';
import { crc32c } from '../../../../src/core/checksum.js';
import { isTaqubaError } from '../../../../src/core/errors.js';
import { decodeRunArchive, encodeRunArchive, RUN_ARCHIVE_FORMAT_VERSION, type RunArchive } from '../../../../src/core/workflow/archive/archive-format.js';
import { StepOutcome } from '../../../../src/core/workflow/index.js';
import { memoryStore } from '../../../support/stores.js';
import { b, eventually, kvKeys, makeHarness, RecordingHook } from '../harness.js';
import { rejection } from '../functions/fn-harness.js';

const memory = memoryStore();

const sample: RunArchive = {
  archiveId: '01HF7YAT00KEB4M7SRAP613QE7',
  exportedAtMs: 1_700_000_000_000,
  handOff: true,
  to: 'https://backend.example',
  source: { queueName: 'workflow-steps', runId: 'r1' },
  kind: 'steps',
  run: { submittedAtMs: 1_699_999_000_000, inputHash: new Uint8Array(32).fill(7) },
  step: {
    number: 2,
    jobId: '01HF7YAT00KEB4M7SRAP613QE6',
    payload: utf8('two'),
    headers: { team: 't' },
    signalWait: 'approve:r1',
    signalDelivered: false,
    priority: 0,
    maxAttempts: 3,
    attempts: 1,
    interruptions: 0,
    runAt: 1_700_000_060_000,
    woken: null,
    lastError: 'boom',
    deduplicated: false,
  },
  history: [['gen/00000000', utf8('event')]],
  signals: [['approve:r1', utf8('yes')]],
  delivered: null,
  memos: [[`run/${'ab'.repeat(32)}`, utf8('memo')]],
  stepOutputs: [],
  kv: [[utf8('app/x'), utf8('x1')]],
};

async function errorOf(bytes: Uint8Array): Promise<unknown> {
  try {
    await decodeRunArchive(bytes);
  } catch (e) {
    return e;
  }
  return undefined;
}

/** `bytes` with the format version set to `version` and the header CRC made right again. */
function withVersion(bytes: Uint8Array, version: number): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  view.setUint16(4, version);
  view.setUint32(6, crc32c(out, 0, 6));
  return out;
}

describe('run archive format', () => {
  it('round-trips', async () => {
    const bytes = await encodeRunArchive(sample);
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('TQRA');
    expect(await decodeRunArchive(bytes)).toEqual(sample);
  });

  it('reports every truncation as CORRUPT_DATA', async () => {
    const bytes = await encodeRunArchive(sample);
    for (let length = 0; length < bytes.length; length++) {
      const e = await errorOf(bytes.subarray(0, length));
      expect(isTaqubaError(e, 'CORRUPT_DATA') && e.details.reason, `truncated to ${length}`).toBe('damaged_archive');
    }
    // And an archive with bytes appended.
    const longer = new Uint8Array(bytes.length + 1);
    longer.set(bytes);
    expect(isTaqubaError(await errorOf(longer), 'CORRUPT_DATA')).toBe(true);
  });

  it('reports every single-bit flip as CORRUPT_DATA, version field included', async () => {
    const bytes = await encodeRunArchive(sample);
    for (let i = 0; i < bytes.length; i++) {
      for (const bit of [0, 5]) {
        const flipped = bytes.slice();
        flipped[i]! ^= 1 << bit;
        const e = await errorOf(flipped);
        expect(isTaqubaError(e, 'CORRUPT_DATA'), `byte ${i} bit ${bit}: ${String(e)}`).toBe(true);
      }
    }
  });

  it('refuses a newer format with a typed error naming both versions', async () => {
    const e = await errorOf(withVersion(await encodeRunArchive(sample), RUN_ARCHIVE_FORMAT_VERSION + 1));
    expect(isTaqubaError(e, 'INVALID_ARGUMENT')).toBe(true);
    const err = e as { message: string; details: Record<string, unknown> };
    expect(err.details).toEqual({ reason: 'archive_version', version: 2, supported: 1 });
    expect(err.message).toContain('format 2');
    expect(err.message).toContain('format 1');
    // Version 0 never existed: damage.
    expect(isTaqubaError(await errorOf(withVersion(await encodeRunArchive(sample), 0)), 'CORRUPT_DATA')).toBe(true);
  });

  it('reports bytes that are no archive as CORRUPT_DATA, and a non-bytes argument as INVALID_ARGUMENT', async () => {
    expect(isTaqubaError(await errorOf(utf8('{"runId":"r1"}')), 'CORRUPT_DATA')).toBe(true);
    expect(isTaqubaError(await errorOf('archive' as unknown as Uint8Array), 'INVALID_ARGUMENT')).toBe(true);
  });
});

describe('importing damaged archives', () => {
  it('writes nothing for a damaged archive, and checks the names that would become keys', async () => {
    const source = await makeHarness(memory.factory);
    const runner = async () => StepOutcome.continueAfter(b('later'), 60_000);
    const { runtime } = source.start(runner, new RecordingHook());
    await runtime.submit({ runId: 'd1' });
    await eventually(async () => (await runtime.getRun('d1'))?.state === 'scheduled', 10_000, 'd1 to sleep');
    const archive = await runtime.exportRun('d1');

    const target = await makeHarness(memory.factory);
    const to = target.runtime(runner, new RecordingHook());
    const flipped = archive.slice();
    flipped[archive.length - 3]! ^= 0x10;
    for (const damaged of [archive.subarray(0, archive.length - 1), flipped]) {
      const e = await rejection(to.importRun(damaged));
      expect([e.code, (e.details as Record<string, unknown>).reason]).toEqual(['CORRUPT_DATA', 'damaged_archive']);
    }
    const future = await rejection(to.importRun(withVersion(archive, 9)));
    expect([future.code, (future.details as Record<string, unknown>).reason]).toEqual(['INVALID_ARGUMENT', 'archive_version']);
    // Intact frames whose names would escape their place: a memo path, a reserved KV key, an archive id.
    for (const forged of [
      { ...sample, memos: [['../../elsewhere', utf8('x')]] as const },
      { ...sample, memos: [['run/..', utf8('x')]] as const },
      { ...sample, kv: [[utf8('workflow/runs/x'), utf8('x')]] as const },
      { ...sample, archiveId: 'a/b' },
      { ...sample, step: { ...sample.step, headers: { 'workflow.run_id': 'other' } } },
    ]) {
      const e = await rejection(to.importRun(await encodeRunArchive(forged as RunArchive)));
      expect([e.code, (e.details as Record<string, unknown>).reason]).toEqual(['CORRUPT_DATA', 'damaged_archive']);
    }
    expect(await kvKeys(target.queue, 'workflow/')).toEqual([]);
    expect(await target.queue.stats('workflow-steps')).toMatchObject({ pending: 0, scheduled: 0 });
    // The intact one imports.
    expect(await to.importRun(archive)).toMatchObject({ newlyImported: true, step: 1 });
  });
});
