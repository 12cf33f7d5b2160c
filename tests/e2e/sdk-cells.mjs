// sdk-cells.mjs: run_cell driven by the official clients as an agent would
// drive a notebook: the v1 client (@modelcontextprotocol/sdk) in a legacy
// session, and the v2 client (@modelcontextprotocol/client) pinned to
// 2026-07-28 with a workspace handle, each for a 20-cell session in which
// every cell builds on the names of the cells before (a value, a function,
// a class, an import, an open file, a thread), its value comes back, and
// the kernel's cell count follows. The clients check every
// structuredContent against run_cell's outputSchema from tools/list.
// Prints TAP. MCP_URL comes from tests/e2e/kernel.sh.
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.MCP_URL);
const CELLS = 20;

let n = 0;
function ok(cond, name, extra) {
  n++;
  console.log(`${cond ? '' : 'not '}ok ${n} - ${name}`);
  if (!cond && extra !== undefined) console.log(`#   ${JSON.stringify(extra)?.slice(0, 1500)}`);
}
const text = (r) => (r?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The notebook: cell i (from 1) and the value it must show (null: none).
// Each builds on names of cells before; the last ones use all of them.
function notebook() {
  const cells = [
    ['total = 0', null],
    ['import math, json, threading', null],
    ['def add(v):\n    global total\n    total += v\n    return total', null],
    ['add(5)', '5'],
    ['class Acc:\n    def __init__(self):\n        self.items = []\n    def push(self, v):\n        self.items.append(v)\n        return len(self.items)', null],
    ['acc = Acc()', null],
    ['acc.push(math.isqrt(49))', '1'],
    ['fh = open("notes.txt", "w")', null],
    ['fh.write("kept open\\n")', '10'],
    ['fh.flush(); open("notes.txt").read()', "'kept open\\n'"],
    ['done = threading.Event()\nt = threading.Thread(target=lambda: done.set())\nt.start(); t.join()', null],
    ['done.is_set()', 'True'],
    ['add(acc.items[0])', '12'],
    ['data = {"cells": 14, "total": total}', null],
    ['json.dumps(data, sort_keys=True)', '\'{"cells": 14, "total": 12}\''],
    ['squares = [i * i for i in range(6)]', null],
    ['sum(squares)', '55'],
    ['print("printed, not a value")', null],
    ['None', null],
    ['total + sum(squares) + len(acc.items)', '68'],
  ];
  return cells;
}

async function session(label, client, withWorkspace) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  ok(names.includes('run_cell') && names.includes('reset_kernel'), `${label}: tools/list has run_cell and reset_kernel`,
    names);
  const cellTool = tools.find((t) => t.name === 'run_cell');
  ok(cellTool?.outputSchema?.required?.includes('kernel'), `${label}: run_cell's outputSchema requires kernel`);
  let workspace = null;
  let good = 0, numbered = 0, kept = 0;
  const bad = [];
  const cells = notebook();
  for (let i = 0; i < CELLS; i++) {
    const [code, want] = cells[i];
    const args = { code, ...(withWorkspace && workspace ? { workspace } : {}) };
    // v1: callTool(params, resultSchema, options); v2: callTool(params, options).
    const res = label.startsWith('v1') ? await client.callTool({ name: 'run_cell', arguments: args }, undefined, { timeout: 120_000 })
      : await client.callTool({ name: 'run_cell', arguments: args }, { timeout: 120_000 });
    const sc = res.structuredContent ?? {};
    if (withWorkspace && i === 0) workspace = sc.workspace;
    const value = sc.value ?? null;
    if (sc.status === 'ok' && !res.isError && value === want) good++;
    else bad.push({ cell: i + 1, status: sc.status, value, want, logs: sc.logs });
    numbered += sc.kernel?.cell === i + 1;
    kept += sc.kernel?.state === (i === 0 ? 'new' : 'kept');
    if (i === 17 && !(sc.logs === 'printed, not a value\n' && value === null)) bad.push({ cell: 18, logs: sc.logs, value });
    if (want !== null && !text(res).includes(`--- value ---\n${want}\n`)) bad.push({ cell: i + 1, text: text(res) });
  }
  ok(good === CELLS && bad.length === 0, `${label}: ${CELLS} cells, each on the names of the ones before, with their values`, bad);
  ok(numbered === CELLS, `${label}: kernel.cell counts 1 to ${CELLS}`);
  ok(kept === CELLS, `${label}: the first cell starts the kernel (new), the others are kept`);
  if (withWorkspace) ok(/^([a-z0-9]+-)?[0-9a-f]{32}$/.test(workspace ?? ''), `${label}: the first cell made a workspace`, workspace);
  // The file the open handle wrote is in the workspace, as run_code's are.
  const ls = await client.callTool({ name: 'list_dir', arguments: withWorkspace ? { workspace } : {} });
  ok((ls.structuredContent?.entries ?? []).some((e) => e.name === 'notes.txt'), `${label}: the workspace's files persist`);
  const reset = await client.callTool({ name: 'reset_kernel', arguments: withWorkspace ? { workspace } : {} });
  ok(!reset.isError, `${label}: reset_kernel`, text(reset));
  const after = await client.callTool({ name: 'run_cell', arguments: { code: 'total', ...(withWorkspace ? { workspace } : {}) } });
  ok(after.isError && after.structuredContent?.status === 'error' && /NameError/.test(after.structuredContent?.logs ?? '') &&
     after.structuredContent?.kernel?.state === 'new' && after.structuredContent?.kernel?.cell === 1,
    `${label}: after the reset the names are gone (NameError in a new kernel's first cell)`, after.structuredContent);
  return workspace;
}

async function main() {
  const info = { name: 'runmyscript-e2e-cells', version: '1.0.0' };
  try {
    const client = new ClientV1(info, { capabilities: {} });
    await client.connect(new TransportV1(url));
    await session('v1 (a legacy session)', client, false);
    await client.close();
  } catch (e) {
    ok(false, 'v1: no exception', String(e?.stack ?? e));
  }
  try {
    const client = new ClientV2(info, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new TransportV2(url));
    const wid = await session('v2 (2026-07-28, a workspace handle)', client, true);
    const d = await client.callTool({ name: 'delete_workspace', arguments: { workspace: wid } });
    ok(!d.isError, 'v2: delete_workspace ends it');
    const gone = await client.callTool({ name: 'run_cell', arguments: { code: '1', workspace: wid } });
    ok(gone.isError && text(gone).includes('unknown workspace'), 'v2: then run_cell in it is refused', text(gone));
    await client.close();
  } catch (e) {
    ok(false, 'v2: no exception', String(e?.stack ?? e));
  }
  console.log(`1..${n}`);
}
main();
