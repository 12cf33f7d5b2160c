// runs.mjs: what the tests that drive a client see of the state directory.
import { readFileSync, readdirSync, existsSync } from 'node:fs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The ids of the runs in STATE/runs now (to tell the new ones later).
export function runIds(stateDir) {
  return new Set(readdirSync(`${stateDir}/runs`));
}

// The status of the first run made since before (runIds) that has a
// result, once it is want; waits at most ms (the last status seen, or null).
export async function newRunStatus(stateDir, before, want, ms = 30000) {
  let status = null;
  for (let i = 0; i < ms / 100 && status !== want; i++) {
    await sleep(100);
    for (const id of readdirSync(`${stateDir}/runs`)) {
      if (before.has(id) || !/^[0-9a-f]{32}$/.test(id)) continue;
      const f = `${stateDir}/runs/${id}/result.json`;
      if (existsSync(f)) status = JSON.parse(readFileSync(f, 'utf8')).status;
    }
  }
  return status;
}
