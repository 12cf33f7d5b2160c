// run_my_script_seed.mjs: the Run My Script seed, unchanged: a script that
// reads a base64 PNG from the JSON in SCRIPT_INPUT, flips it with Pillow
// and saves flipped.png in SCRIPT_OUTPUT. The server sees the PIL import
// and installs pillow for it.
//
//   node run_my_script_seed.mjs [http://127.0.0.1:8080/mcp] [SCRIPT] [INPUT_JSON] [SAVE_AS]
// (SCRIPT and INPUT_JSON default to the seed in tests/fixtures/seeds/)
import { readFileSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:8080/mcp');
const seeds = new URL('../tests/fixtures/seeds/', import.meta.url);
const script = process.argv[3] ?? new URL('run_my_script_test.py', seeds);
const input = process.argv[4] ?? new URL('run_my_script_test_input.json', seeds);
const saveAs = process.argv[5] ?? 'flipped.png';
const client = new Client({ name: 'run-my-script-seed-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));

const result = await client.callTool(
  { name: 'run_my_script', arguments: { code: readFileSync(script, 'utf8'), user_input: readFileSync(input, 'utf8') } },
  undefined,
  { timeout: 300_000 }, // the first run may install pillow
);
const run = result.structuredContent;
console.log(`status: ${run.status}`);
console.log(`logs: ${run.logs.trim()}`);
const png = result.content.find((c) => c.type === 'image');
if (png) {
  writeFileSync(saveAs, Buffer.from(png.data, 'base64'));
  console.log(`saved the flipped image (${png.mimeType}) to ${saveAs}`);
}
await client.close();
if (run.status !== 'ok' || !png) process.exit(1);
