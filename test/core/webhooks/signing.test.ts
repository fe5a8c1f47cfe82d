/**
 * Standard Webhooks signatures: the published test vector, sign/verify round trips, and every
 * way a verification fails (tampered body, wrong secret, stale timestamp, missing headers).
 */
import { describe, expect, it } from 'vitest';
import { MockClock } from '../../../src/core/clock.js';
import { isTaqubaError } from '../../../src/core/errors.js';
import { toBase64, fromBase64 } from '../../../src/core/webhooks/base64.js';
import { signWebhook, verifyWebhook } from '../../../src/core/webhooks/index.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TS = 1614265330;
const BODY = '{"test": 2432232314}';

function headersFor(id: string, ts: number, signature: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': signature };
}

async function reason(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    if (isTaqubaError(e, 'INVALID_ARGUMENT')) return e.details?.reason;
    throw e;
  }
  return 'resolved';
}

describe('webhook signatures', () => {
  const clock = new MockClock(TS * 1000);

  it('matches the Standard Webhooks test vector', async () => {
    expect(await signWebhook(SECRET, ID, TS, BODY)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('a signed body verifies, from a header record or a Fetch Headers object', async () => {
    const sig = await signWebhook(SECRET, ID, TS, BODY);
    expect(await verifyWebhook(SECRET, headersFor(ID, TS, sig), BODY, { clock })).toEqual({ id: ID, timestamp: TS });
    const fetchHeaders = new Headers(headersFor(ID, TS, `v1,bogus ${sig}`));
    expect(await verifyWebhook(SECRET, fetchHeaders, new TextEncoder().encode(BODY), { clock })).toEqual({ id: ID, timestamp: TS });
  });

  it('a tampered body fails with webhook_signature_mismatch', async () => {
    const sig = await signWebhook(SECRET, ID, TS, BODY);
    expect(await reason(verifyWebhook(SECRET, headersFor(ID, TS, sig), BODY.replace('2', '3'), { clock }))).toBe('webhook_signature_mismatch');
  });

  it('another secret or another id fails with webhook_signature_mismatch', async () => {
    const sig = await signWebhook(SECRET, ID, TS, BODY);
    expect(await reason(verifyWebhook('whsec_' + toBase64(new Uint8Array(24).fill(7)), headersFor(ID, TS, sig), BODY, { clock }))).toBe('webhook_signature_mismatch');
    expect(await reason(verifyWebhook(SECRET, headersFor('msg_other', TS, sig), BODY, { clock }))).toBe('webhook_signature_mismatch');
  });

  it('a timestamp outside the tolerance fails (replay protection)', async () => {
    const old = TS - 301;
    const sig = await signWebhook(SECRET, ID, old, BODY);
    expect(await reason(verifyWebhook(SECRET, headersFor(ID, old, sig), BODY, { clock }))).toBe('webhook_timestamp_out_of_tolerance');
    expect(await verifyWebhook(SECRET, headersFor(ID, old, sig), BODY, { clock, toleranceSeconds: 600 })).toEqual({ id: ID, timestamp: old });
  });

  it('missing headers and bad secrets are INVALID_ARGUMENT with a reason', async () => {
    expect(await reason(verifyWebhook(SECRET, { 'webhook-id': ID }, BODY, { clock }))).toBe('missing_webhook_headers');
    expect(await reason(signWebhook('whsec_!!', ID, TS, BODY))).toBe('invalid_webhook_secret');
    expect(await reason(signWebhook(new Uint8Array(0), ID, TS, BODY))).toBe('invalid_webhook_secret');
  });

  it('base64 round-trips every length', () => {
    for (let n = 0; n < 10; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + 250) & 0xff);
      expect(fromBase64(toBase64(bytes))).toEqual(bytes);
    }
    expect(toBase64(new TextEncoder().encode('hello'))).toBe('aGVsbG8=');
  });
});
