// cluster-client.mjs: the official TypeScript SDK client against two
// runmyscript nodes behind one nginx (tests/e2e/cluster.sh drives it):
// connects until a session lands on node b1, calls a tool, writes READY
// and waits for GO (the driver stops b1 in between); then the same
// session's next call must fail with HTTP 404 (StreamableHTTPError 404),
// which is the client's cue to initialize again, and a new client must
// land on b2 and work. Prints TAP lines, numbered from TAP_FROM + 1.
//
//   MCP_URL=... READY_FILE=... GO_FILE=... TAP_FROM=N node cluster-client.mjs
import { existsSync, writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.MCP_URL);
let n = Number(process.env.TAP_FROM ?? 0);
let failed = 0;
function ok(cond, name, extra) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? '' : 'not '}ok ${n} - SDK: ${name}`);
  if (!cond && extra !== undefined) console.log(`#   ${String(JSON.stringify(extra)).slice(0, 2000)}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connect() {
  const client = new Client({ name: 'runmyscript-cluster', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  return { client, transport };
}

async function main() {
  // New sessions spread over the nodes: connect until one is on b1.
  let mine = null;
  const others = [];
  for (let i = 0; i < 40 && !mine; i++) {
    const c = await connect();
    if (c.transport.sessionId?.startsWith('b1-')) mine = c;
    else others.push(c);
  }
  ok(mine !== null, 'a session on node b1 (its id starts with b1-)');
  for (const c of others) await c.transport.terminateSession().catch(() => {});
  if (!mine) return;
  const before = await mine.client.callTool({ name: 'run_code', arguments: { code: 'print(6 * 7)' } });
  ok(before.structuredContent?.status === 'ok' && before.structuredContent?.run_id?.startsWith('b1-'),
     'run_code on it runs on b1', before.structuredContent);

  writeFileSync(process.env.READY_FILE, mine.transport.sessionId);
  for (let i = 0; i < 600 && !existsSync(process.env.GO_FILE); i++) await sleep(100);

  let err = null;
  try {
    await mine.client.listTools();
  } catch (e) {
    err = e;
  }
  ok(err instanceof StreamableHTTPError && err.code === 404,
     'b1 stopped: the old session gets HTTP 404 (the cue to initialize again)', err && { code: err.code, message: err.message });
  await mine.client.close().catch(() => {});

  const again = await connect();
  ok(again.transport.sessionId?.startsWith('b2-'), 'a new initialize lands on b2', again.transport.sessionId);
  const after = await again.client.callTool({ name: 'run_code', arguments: { code: 'print(6 * 7)' } });
  ok(after.structuredContent?.status === 'ok' && after.structuredContent?.logs === '42\n' &&
     after.structuredContent?.run_id?.startsWith('b2-'), 'and its calls work there', after.structuredContent);
  await again.transport.terminateSession().catch(() => {});
  await again.client.close().catch(() => {});
}

main().then(
  () => process.exit(failed ? 1 : 0),
  (e) => {
    ok(false, `the client threw: ${e?.stack ?? e}`);
    process.exit(1);
  },
);
