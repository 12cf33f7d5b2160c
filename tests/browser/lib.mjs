// lib.mjs: what the browser tests (web.mjs, notebook.mjs) share: TAP lines
// with a count, a check that turns an exception into a failure, a full-page
// screenshot into OUT, and Debian's chromium launched headless with the
// flags these machines need. The environment is the driver's (web.sh,
// notebook.sh): OUT and CHROMIUM.
import { chromium } from 'playwright-core';
import { join } from 'node:path';

let n = 0, failed = 0;
export function ok(cond, what, detail) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? '' : 'not '}ok ${n} - ${what}`);
  if (!cond && detail !== undefined) console.log(`#   ${String(detail).split('\n').join('\n#   ')}`);
}
export function skip(what, why) { n++; console.log(`ok ${n} # SKIP ${what}: ${why}`); }
export async function check(what, fn) {
  try { await fn(); } catch (e) { ok(false, what, e.stack || e); }
}
export const shot = (page, name) => page.screenshot({ path: join(process.env.OUT, name + '.png'), fullPage: true });
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
// The notebook's cells (notebook.mjs, kernel-restore.mjs): the cell at
// index i (from 0), and the wait until it shows a prompt [N] and a status
// (it has run), within LONG (a first kernel on a loaded machine).
export const LONG = 180000;
export const nbCell = (p, i) => p.locator('#cells .cell').nth(i);
export function nbRan(p, i) {
  return p.waitForFunction((k) => {
    const c = document.querySelectorAll('#cells .cell')[k];
    return c && /^\[\d+\]$/.test(c.querySelector('.prompt').textContent) && c.querySelector('.cell-status').textContent.startsWith('Status');
  }, i, { timeout: LONG });
}
// The plan, and the exit status of the test.
export function done() {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}
