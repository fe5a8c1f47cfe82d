// The only globals the platform-neutral core may touch. Anything else (DOM, Node) is a compile
// error under src/core/tsconfig.json, which is how neutrality is enforced rather than hoped for.
// Time and timers are reached only through the injected Clock (see clock.ts).

declare class TextEncoder {
  encode(input?: string): Uint8Array;
}
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean });
  decode(input?: Uint8Array): string;
}

interface AbortSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
declare var AbortSignal: {
  prototype: AbortSignal;
  abort(reason?: unknown): AbortSignal;
  any(signals: AbortSignal[]): AbortSignal;
};
declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

declare function queueMicrotask(callback: () => void): void;
declare function setTimeout(callback: () => void, ms?: number): unknown;
declare function clearTimeout(handle: unknown): void;

// An opaque WebCrypto key (HMAC-SHA256 for webhook signatures is the only use).
interface CryptoKey {
  readonly type: string;
}
declare var crypto: {
  subtle: {
    digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>;
    importKey(format: 'raw', keyData: Uint8Array, algorithm: { name: 'HMAC'; hash: 'SHA-256' }, extractable: false, usages: ['sign']): Promise<CryptoKey>;
    sign(algorithm: 'HMAC', key: CryptoKey, data: Uint8Array): Promise<ArrayBuffer>;
  };
  getRandomValues<T extends Uint8Array>(array: T): T;
};

declare var console: {
  log(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
};
