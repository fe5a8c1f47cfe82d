/**
 * Offline support: caches the built app on install and serves it cache-first, so the page (and
 * its worker) load without a network after the first visit. The list of files is injected at
 * build time (demo/vite.config.ts); a new build has a new list, hence a new cache, and the old
 * caches are dropped on activate.
 */

// Minimal service-worker types: the project compiles against the DOM library, not WebWorker.
interface ExtendableEvent extends Event {
  waitUntil(promise: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(response: Promise<Response>): void;
}
interface ServiceWorkerScope {
  readonly registration: { readonly scope: string };
  skipWaiting(): Promise<void>;
  readonly clients: { claim(): Promise<void> };
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (event: FetchEvent) => void): void;
}

const sw = self as unknown as ServiceWorkerScope;
/** Replaced by the build with a JSON array of the built files, relative to the scope. */
const PRECACHE: readonly string[] = JSON.parse('__PRECACHE_MANIFEST__') as string[];
const CACHE = `taquba-demo-${PRECACHE.join('|').length.toString(36)}-${hash(PRECACHE.join('|'))}`;

function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

sw.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      await cache.addAll(['./', ...PRECACHE].map((path) => new URL(path, sw.registration.scope).href));
      await sw.skipWaiting();
    })(),
  );
});

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith('taquba-demo-') && name !== CACHE) await caches.delete(name);
      await sw.clients.claim();
    })(),
  );
});

sw.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== new URL(sw.registration.scope).origin) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      // Navigations (any query string) get the app shell. `ignoreVary`: the server varies on
      // request headers (Origin, Accept-Encoding) that differ between the precache request and
      // the page's own requests, and a cached file is the same file either way.
      const cached = request.mode === 'navigate' ? await cache.match(new URL('./', sw.registration.scope).href, { ignoreVary: true }) : await cache.match(request, { ignoreSearch: true, ignoreVary: true });
      if (cached) return cached;
      return fetch(request);
    })(),
  );
});
