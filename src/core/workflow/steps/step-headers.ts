/** Reading and writing the reserved headers of step jobs. */
import type { JobRecord } from '../../queue/index.js';
import { HEADER_RUN_ID, HEADER_STEP, RESERVED_HEADER_PREFIX } from '../constants.js';
import { validateRunId } from '../validation.js';

const MAX_STEP = 0xffffffff;

/** The run id and step number of a step job, or a reason why it is not a valid one. */
export function parseStepJob(job: JobRecord): { runId: string; step: number } | { invalid: string } {
  const runId = job.headers[HEADER_RUN_ID];
  if (runId === undefined) return { invalid: `step job is missing header ${HEADER_RUN_ID}. id=${job.id}` };
  try {
    validateRunId(runId);
  } catch {
    return { invalid: `step job has an invalid ${HEADER_RUN_ID}. id=${job.id}` };
  }
  const raw = job.headers[HEADER_STEP];
  const step = raw !== undefined && /^[0-9]{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(step <= MAX_STEP)) return { invalid: `step job has an invalid ${HEADER_STEP}. id=${job.id} value=${JSON.stringify(raw ?? null)}` };
  return { runId, step };
}

/** The headers without the reserved `workflow.` ones: what runners and hooks see. */
export function userHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!k.startsWith(RESERVED_HEADER_PREFIX)) out[k] = v;
  return out;
}

/** Headers of step `step` of `runId`: the user's plus the reserved run id and step number. */
export function stepJobHeaders(user: Readonly<Record<string, string>>, runId: string, step: number, extra?: Record<string, string>): Record<string, string> {
  return { ...user, [HEADER_RUN_ID]: runId, [HEADER_STEP]: String(step), ...extra };
}
