/**
 * SHA-256 for content-derived ids and input hashes. Small inputs (run inputs, keys) are hashed in
 * JS (`@noble/hashes`): about 5-10 us for 100 bytes, where WebCrypto's digest costs 30-40 us of
 * CPU for the job it posts to a thread pool and the promise back. WebCrypto wins from a few KiB
 * up and keeps large inputs off the event loop. Same digest either way.
 */
import { sha256 as sha256InJs } from '@noble/hashes/sha2.js';
import { toHex } from './bytes.js';

/** Inputs up to this size are hashed in JS (where it is cheaper than WebCrypto's thread hop). */
const IN_JS_MAX_BYTES = 2048;

export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  if (data.length <= IN_JS_MAX_BYTES) return sha256InJs(data);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}

export async function sha256Hex(data: Uint8Array): Promise<string> {
  return toHex(await sha256(data));
}
