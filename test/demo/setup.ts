/**
 * Global setup of the `demo` test project: builds the demo once and serves the build on
 * 127.0.0.1 for the whole run (one origin, so a persistent profile keeps its storage across
 * reloads), then stops it.
 */
import type { TestProject } from 'vitest/node';
import { buildDemo, serveDemo } from '../../demo/scripts/serve.js';

declare module 'vitest' {
  export interface ProvidedContext {
    demoUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await buildDemo();
  const server = await serveDemo();
  project.provide('demoUrl', server.url);
  return () => server.close();
}
