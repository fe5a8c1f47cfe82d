/** SHA-256 through WebCrypto, available in browsers, workers and Node >= 20 alike. */
import { toHex } from './bytes.js';

export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}

export async function sha256Hex(data: Uint8Array): Promise<string> {
  return toHex(await sha256(data));
}
