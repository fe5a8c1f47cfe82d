// vite 8 lists a Windows-only optional dependency (napi-windows-process-start-time) that the npm
// registry reachable here answers 404 for; `npm install` skips it, so it never reaches the lock
// file, and then `npm ci` refuses the lock as incomplete. Recording it as an optional win32
// package (never installed on Linux) keeps `npm ci` working. Idempotent.
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const key = 'node_modules/napi-windows-process-start-time';
if (!lock.packages[key]) {
  lock.packages[key] = { version: '0.1.0', dev: true, license: 'MIT', optional: true, os: ['win32'] };
  writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
  console.error('ensure-lock: recorded napi-windows-process-start-time as an optional win32 package');
}
