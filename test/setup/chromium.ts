/**
 * Finds the Chromium binary the browser test project drives through Playwright. Nothing is ever
 * downloaded by a test tool: the order is
 *   1. env CHROMIUM_PATH,
 *   2. /usr/bin/chromium (Debian's `chromium` package) when it exists,
 *   3. the headless Chromium shipped inside the npm package @sparticuz/chromium, which unpacks
 *      itself to /tmp on first use.
 */
import { existsSync } from 'node:fs';

export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Flags for a root user in a container without a GPU or network. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

export type ChromiumSource = 'CHROMIUM_PATH' | 'system' | '@sparticuz/chromium';

export async function resolveChromium(): Promise<{ executablePath: string; source: ChromiumSource }> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new Error(`CHROMIUM_PATH does not exist. path=${fromEnv}`);
    return { executablePath: fromEnv, source: 'CHROMIUM_PATH' };
  }
  if (existsSync(SYSTEM_CHROMIUM)) return { executablePath: SYSTEM_CHROMIUM, source: 'system' };
  const sparticuz = (await import('@sparticuz/chromium')).default;
  return { executablePath: await sparticuz.executablePath(), source: '@sparticuz/chromium' };
}
