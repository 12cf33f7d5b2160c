// sdk-modern.mjs: runmyscript's MCP server driven by the official clients
// in every way they reach it: the v2 client (@modelcontextprotocol/client)
// pinned to 2026-07-28, in 'auto' negotiation and in its default (legacy)
// mode, and the v1 client (@modelcontextprotocol/sdk). Each lists the
// tools, runs the seed example, keeps a file in a workspace across calls
// (the handle in 2026-07-28, the session before), writes files into it
// with write_file (which makes a workspace in 2026-07-28), and cancels a run by
// closing its stream (2026-07-28; a v1 client's notifications/cancelled);
// the modern ones also run a long script as a task and poll it to its end.
// Prints TAP. MCP_URL, STATE_DIR, TOP and TASK_AFTER_MS (the server's
// task_after) come from tests/e2e/sdk-modern.sh.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.MCP_URL);
const stateDir = process.env.STATE_DIR;
const top = process.env.TOP;
const TASKS = 'io.modelcontextprotocol/tasks';

let n = 0;
function ok(cond, name, extra) {
  n++;
  console.log(`${cond ? '' : 'not '}ok ${n} - ${name}`);
  if (!cond && extra !== undefined) console.log(`#   ${JSON.stringify(extra)?.slice(0, 1500)}`);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The run directories whose result says status, after time t (ms).
function runsWithStatus(status, since) {
  const dir = `${stateDir}/runs`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((id) => {
    try {
      const r = JSON.parse(readFileSync(`${dir}/${id}/result.json`, 'utf8'));
      return r.status === status && r.run_id && readFileSync(`${dir}/${id}/script.py`, 'utf8').includes(since);
    } catch {
      return false;
    }
  });
}

// The seed example in its standard-library form (the PIL one needs the
// test wheelhouse; tests/e2e/sdk.sh runs it): the same contract.
function seed() {
  return {
    code: readFileSync(`${top}/tests/fixtures/scripts/seed-stdlib.py`, 'utf8'),
    input: readFileSync(`${top}/tests/fixtures/seeds/run_my_script_test_input.json`, 'utf8'),
  };
}

function makeClient(mode) {
  const info = { name: `runmyscript-e2e-${mode}`, version: '1.0.0' };
  if (mode === 'v1') return [new ClientV1(info, { capabilities: {} }), new TransportV1(url)];
  // The tasks extension is declared on the one call that may become a task
  // (per request, as 2026-07-28 has it): callTool() takes no task answer.
  const opts = { capabilities: {} };
  if (mode === 'pin') opts.versionNegotiation = { mode: { pin: '2026-07-28' } };
  if (mode === 'auto') opts.versionNegotiation = { mode: 'auto' };
  return [new ClientV2(info, opts), new TransportV2(url)];
}

// One 2026-07-28 request with the tasks extension declared, as a client
// sends it (headers mirror the body); its result, or throws its error.
let rawId = 1000;
async function raw(method, params, name) {
  const body = { jsonrpc: '2.0', id: rawId++, method, params: { ...params, _meta: {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'runmyscript-e2e', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } } } };
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: {
    'Content-Type': 'application/json', Accept: 'application/json', 'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method, 'Mcp-Name': name } });
  const m = await res.json();
  if (m.error) throw new Error(`${method}: ${JSON.stringify(m.error)}`);
  return m.result;
}

async function one(mode) {
  const modern = mode === 'pin' || mode === 'auto';
  const [client, transport] = makeClient(mode);
  await client.connect(transport);
  const version = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
  ok(version === (modern ? '2026-07-28' : '2025-11-25'), `${mode}: the revision`, version);
  ok(client.getServerVersion()?.name === 'runmyscript', `${mode}: serverInfo`, client.getServerVersion());

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  ok(names.includes('run_code') && names.includes('run_my_script'), `${mode}: tools/list`, names);
  const rc = tools.find((t) => t.name === 'run_code');
  if (modern) {
    ok(names.includes('delete_workspace'), `${mode}: delete_workspace is listed`, names);
    ok(rc?.inputSchema?.properties?.workspace?.['x-mcp-header'] === 'Workspace', `${mode}: workspace has x-mcp-header`,
      rc?.inputSchema?.properties?.workspace);
  } else {
    ok(!names.includes('delete_workspace') && !rc?.inputSchema?.properties?.workspace,
      `${mode}: no workspace argument in a session`, names);
  }

  // The seed example, as Run My Script ran it.
  const s = seed();
  const r1 = await client.callTool({ name: 'run_my_script', arguments: { code: s.code, user_input: s.input } });
  ok(r1.structuredContent?.status === 'ok' && !r1.isError, `${mode}: the seed example runs`, r1.structuredContent?.logs);

  // A file kept across calls: in the workspace the handle names, or the session's.
  const w1 = await client.callTool({ name: 'run_code', arguments: { code: `open("kept.txt", "w").write("${mode}")` } });
  const wid = w1.structuredContent?.workspace;
  if (modern) {
    ok(/^[0-9a-f]{32}$/.test(wid ?? ''), `${mode}: run_code makes a workspace and returns its handle`, w1.structuredContent);
    ok(text(w1).includes(`workspace: ${wid}`), `${mode}: the handle is in the text too`);
  }
  const args2 = { code: 'print(open("kept.txt").read())', ...(modern ? { workspace: wid } : {}) };
  const w2 = await client.callTool({ name: 'run_code', arguments: args2 });
  ok(w2.structuredContent?.logs === `${mode}\n`, `${mode}: the next call sees the file`, w2.structuredContent);

  // write_file: the client's bytes into mounts/ of the same workspace (the
  // handle, or the session's), where the next run reads them; in
  // 2026-07-28 without a handle it makes a workspace and returns it.
  const inWs = modern ? { workspace: wid } : {};
  const wf = await client.callTool({ name: 'write_file', arguments: { path: 'data/in.csv', content: 'a,b\n1,2\n', ...inWs } });
  ok(!wf.isError && wf.structuredContent?.mounted_as === 'mounts/data/in.csv' && wf.structuredContent?.bytes === 8 &&
     wf.structuredContent?.mime === 'text/csv', `${mode}: write_file writes text into mounts/`, wf);
  const wb = await client.callTool({ name: 'write_file', arguments: { path: 'data/b.bin', content: 'AAEC/w==', encoding: 'base64', ...inWs } });
  ok(!wb.isError && wb.structuredContent?.bytes === 4, `${mode}: and base64, decoded`, wb.structuredContent);
  const wr = await client.callTool({ name: 'run_code', arguments: {
    code: 'print(open("mounts/data/in.csv").read(), list(open("mounts/data/b.bin", "rb").read()))', ...inWs } });
  ok(wr.structuredContent?.logs === 'a,b\n1,2\n [0, 1, 2, 255]\n', `${mode}: a run of the workspace reads both`, wr.structuredContent);
  const wbad = await client.callTool({ name: 'write_file', arguments: { path: '../x.csv', content: 'x', ...inWs } });
  ok(wbad.isError && text(wbad).startsWith("write_file: the path '../x.csv' is not inside mounts/: give a relative path"),
    `${mode}: a path that leaves mounts/ is refused, saying what to change`, text(wbad));
  if (modern) {
    const wn = await client.callTool({ name: 'write_file', arguments: { path: 'n.txt', content: 'new' } });
    const nid = wn.structuredContent?.workspace;
    ok(!wn.isError && /^[0-9a-f]{32}$/.test(nid ?? '') && nid !== wid,
      `${mode}: write_file without a handle makes a workspace and returns it`, wn.structuredContent);
    const wnr = await client.callTool({ name: 'run_code', arguments: { code: 'print(open("mounts/n.txt").read())', workspace: nid } });
    ok(wnr.structuredContent?.logs === 'new\n', `${mode}: which the next call takes`, wnr.structuredContent);
    await client.callTool({ name: 'delete_workspace', arguments: { workspace: nid } });
  }
  if (modern) {
    const w3 = await client.callTool({ name: 'run_code', arguments: { code: 'import os; print(os.path.exists("kept.txt"))' } });
    ok(w3.structuredContent?.logs === 'False\n' && w3.structuredContent?.workspace !== wid,
      `${mode}: a call without the handle gets a new workspace`, w3.structuredContent);
    const d = await client.callTool({ name: 'delete_workspace', arguments: { workspace: wid } });
    ok(!d.isError, `${mode}: delete_workspace`, d);
    const gone = await client.callTool({ name: 'list_dir', arguments: { workspace: wid } });
    ok(gone.isError && text(gone).includes('unknown workspace'), `${mode}: the deleted workspace is gone`, text(gone));
  }

  // Giving up on a call: in 2026-07-28 the client closes the call's stream,
  // which cancels the run; in a legacy session the clients send
  // notifications/cancelled (a closed stream alone is no cancel there).
  const mark = `cancel-${mode}-${Date.now()}`;
  const ac = new AbortController();
  const sleepS = 60;
  const params = { name: 'run_my_script', arguments: { code: `# ${mark}\nimport time\ntime.sleep(${sleepS})` } };
  // v1: callTool(params, resultSchema, options); v2: callTool(params, options).
  const call = (mode === 'v1' ? client.callTool(params, undefined, { signal: ac.signal })
    : client.callTool(params, { signal: ac.signal })).catch((e) => e);
  await sleep(1500);
  ac.abort();
  await call;
  const want = 'cancelled';
  let ended = [];
  for (let i = 0; i < 150 && ended.length === 0; i++) {
    await sleep(200);
    ended = runsWithStatus(want, mark);
  }
  ok(ended.length === 1, `${mode}: giving up on the call cancels its run (${modern ? 'the stream closed'
    : 'notifications/cancelled'}; status cancelled, its jail gone)`, ended);

  if (modern) {
    // A long script becomes a task after task_after; poll it to its end.
    // The v2 client 2.4.0 refuses a result of type "task" (its tasks are a
    // package of their own that needs the host's raw dispatcher), so these
    // requests go as the client would send them, by fetch, with the
    // revision it negotiated.
    const ms = Number(process.env.TASK_AFTER_MS);
    const long = `import time\ntime.sleep(${(ms * 3) / 1000})\nprint("long done")`;
    const created = await raw('tools/call', { name: 'run_code', arguments: { code: long } }, 'run_code');
    ok(created.resultType === 'task' && /^[0-9a-f]{32}$/.test(created.taskId ?? ''), `${mode}: a long run becomes a task`,
      created);
    let task = created;
    for (let i = 0; i < 300 && !['completed', 'failed', 'cancelled'].includes(task.status); i++) {
      await sleep(task.pollIntervalMs ?? 500);
      task = await raw('tasks/get', { taskId: created.taskId }, created.taskId);
    }
    ok(task.status === 'completed' && task.result?.structuredContent?.logs === 'long done\n',
      `${mode}: tasks/get polls it to completion, with the result`, task);
    ok(/^[0-9a-f]{32}$/.test(task.result?.structuredContent?.workspace ?? ''), `${mode}: the task's result names its workspace`);
  }
  await client.close();
}

async function main() {
  for (const mode of ['pin', 'auto', 'legacy', 'v1']) {
    try {
      await one(mode);
    } catch (e) {
      ok(false, `${mode}: no exception`, String(e?.stack ?? e));
    }
  }
  console.log(`1..${n}`);
}
main();
