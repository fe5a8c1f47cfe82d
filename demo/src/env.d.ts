/// <reference types="vite/client" />

/** True in a build (see demo/vite.config.ts): register the offline service worker. */
declare const __OFFLINE_BUILD__: boolean;
