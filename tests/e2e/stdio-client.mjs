// stdio-client.mjs: `runmyscript mcp`, MCP over stdio, driven by the
// official TypeScript SDK's stdio client (StdioClientTransport, pinned in
// tests/package.json) as a desktop client starts it: the command and its
// arguments, nothing else. Prints TAP.
//
//   RUNMYSCRIPT=... STATE_DIR=... TOP=... WARM=0|1 HAVE_PILLOW=0|1 node stdio-client.mjs
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { runIds, newRunStatus } from './runs.mjs';

const { RUNMYSCRIPT, STATE_DIR: stateDir, TOP: top } = process.env;
let n = 0;
let failed = 0;
function ok(cond, name, extra) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? '' : 'not '}ok ${n} - ${name}`);
  if (!cond && extra !== undefined) console.log(`#   ${JSON.stringify(extra)?.slice(0, 2000)}`);
}
function skip(name, why) { n++; console.log(`ok ${n} # SKIP ${name}: ${why}`); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// The environment a client's configuration gives the command (the test's
// state directory and wheelhouse; no index is ever reached).
const env = {};
for (const k of Object.keys(process.env)) if (k.startsWith('RUNMYSCRIPT_')) env[k] = process.env[k];
env.RUNMYSCRIPT_LOG_LEVEL = 'info';

async function main() {
  const transport = new StdioClientTransport({ command: RUNMYSCRIPT, args: ['mcp'], env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr.on('data', (d) => { stderr += d; });
  const client = new Client({ name: 'runmyscript-stdio-e2e', version: '1.0.0' }, { capabilities: {} });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (m) => logs.push(m.params));
  await client.connect(transport);
  ok(true, 'connect over stdio: initialize and notifications/initialized');
  ok(client.getServerVersion()?.name === 'runmyscript', 'serverInfo.name', client.getServerVersion());
  ok(client.getServerCapabilities()?.tools && client.getServerCapabilities()?.logging, 'capabilities: tools and logging');
  ok((client.getInstructions() ?? '').includes('SCRIPT_OUTPUT'), 'instructions');
  await client.setLoggingLevel('debug');
  ok(true, 'logging/setLevel debug');

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  ok(JSON.stringify(names) === JSON.stringify(['run_code', 'run_my_script', 'list_dir', 'preview_file', 'mount_file', 'write_file', 'persist_artifact']),
    'tools/list: the same seven tools as /mcp', names);
  ok(tools.every((t) => t.description && t.inputSchema?.type === 'object' && t.outputSchema), 'with descriptions and schemas');

  // run_code with the seed example (tests/fixtures/seeds/) and its input,
  // with progress: the same result and notifications as over HTTP.
  const seedCode = readFileSync(`${top}/tests/fixtures/seeds/run_my_script_test.py`, 'utf8');
  const seedInput = readFileSync(`${top}/tests/fixtures/seeds/run_my_script_test_input.json`, 'utf8');
  if (process.env.HAVE_PILLOW === '1') {
    const progress = [];
    const res = await client.callTool({ name: 'run_code', arguments: { code: seedCode, input: seedInput } }, undefined, {
      onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 300_000,
    });
    const sc = res.structuredContent;
    ok(res.isError === false && sc?.status === 'ok', 'run_code with the seed example and its input: ok', sc?.error ?? sc?.logs);
    ok(sc?.requirements?.some((r) => r.startsWith('pillow==')), 'pillow detected and installed (from the wheelhouse)', sc?.requirements);
    ok(sc?.logs?.includes('Image flipped and saved as flipped.png.'), 'the seed\'s log line', sc?.logs);
    const png = sc?.artifacts?.find((a) => a.path === 'flipped.png');
    ok(png?.mime === 'image/png' && png?.summary === 'PNG image 256x256', 'flipped.png, a 256x256 PNG', png);
    const img = res.content.find((c) => c.type === 'image');
    ok(img?.mimeType === 'image/png' && Buffer.from(img.data, 'base64').length === png?.size, 'the image inline', img?.mimeType);
    ok(progress.length >= 4 && progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
      `progress notifications, increasing (${progress.length})`, progress);
    // (The SDK hands a notification on a microtask later and forgets the
    // request's progress handler once its response is read: a "done"
    // that came in the same read as the result may be dropped there.)
    const msgs = progress.map((p) => p.message);
    ok(msgs[0] === 'queued' && msgs.includes('running') && msgs.some((m) => m.startsWith('installing requirements')),
      'they name the phases: queued, installing, running', msgs);
    const file = `${stateDir}/runs/${sc?.run_id}/output/flipped.png`;
    ok(existsSync(file), 'the artifact is on this machine, under the state directory the client shares', file);
  } else {
    skip('the seed example', 'no pillow wheel in the test wheelhouse (python3-pil missing)');
  }
  const lines = logs.filter((l) => l.logger === 'stdout').map((l) => l.data);
  const hello = await client.callTool({ name: 'run_code', arguments: { code: 'import sys\nprint("hello over stdio")\nprint("to stderr", file=sys.stderr)' } });
  ok(hello.isError === false && hello.structuredContent?.logs === 'hello over stdio\nto stderr\n', 'run_code: the log', hello.structuredContent);
  ok(logs.some((l) => l.logger === 'stdout' && l.data === 'hello over stdio' && l.level === 'info') &&
     logs.some((l) => l.logger === 'stderr' && l.data === 'to stderr' && l.level === 'warning'),
     'log notifications: stdout at info, stderr at warning', logs.slice(lines.length));

  // run_my_script: a fresh directory; the traceback's path is the one the
  // other doors show.
  const bad = await client.callTool({ name: 'run_my_script', arguments: { code: 'raise ValueError("no good")' } });
  ok(bad.isError === true && bad.structuredContent?.status === 'error' && bad.structuredContent.logs.includes('ValueError: no good'),
    'a failing script: isError with the traceback', bad.structuredContent);
  const inSession = await client.callTool({ name: 'run_code', arguments: { code: 'raise ValueError("no good")' } });
  if (bad.structuredContent?.isolation === 'namespaces+seccomp')
    ok(bad.structuredContent.logs.includes('File "/job/script.py"') && inSession.structuredContent.logs.includes('File "/job/script.py"'),
      'the traceback names /job/script.py, in a fresh directory and in the session alike', [bad.structuredContent.logs, inSession.structuredContent.logs]);
  else
    skip('the script\'s path in a traceback', 'runs are not in the namespaces here');

  // The session's workspace persists between calls, as over HTTP.
  await client.callTool({ name: 'run_code', arguments: { code: 'open("notes.md", "w").write("# notes\\n")' } });
  const ls = await client.callTool({ name: 'list_dir', arguments: {} });
  ok(ls.structuredContent?.entries?.some((e) => e.name === 'notes.md'), 'list_dir sees a file an earlier call wrote', ls.structuredContent);

  // Its own warm pool while it lives: a later run of one environment
  // starts warm once the pool has a zygote for it.
  if (process.env.WARM === '1') {
    let start = null;
    for (let i = 0; i < 40 && start !== 'warm'; i++) {
      const w = await client.callTool({ name: 'run_my_script', arguments: { code: 'print("warm?")' } });
      start = w.structuredContent?.start;
      if (start !== 'warm') await sleep(250);
    }
    ok(start === 'warm', 'runs start warm: the stdio server keeps a warm pool of its own', start);
  } else {
    skip('warm starts', 'this host cannot make user namespaces, or warm is off');
  }

  // Cancel: the SDK sends notifications/cancelled when the signal aborts;
  // the run stops and no result comes.
  const before = runIds(stateDir);
  const ac = new AbortController();
  let rejected = null;
  await client.callTool({ name: 'run_code', arguments: { code: 'import time\nprint("sleeping", flush=True)\ntime.sleep(120)' } }, undefined, {
    signal: ac.signal, timeout: 300_000,
    onprogress: (p) => { if (p.message === 'running') ac.abort('changed my mind'); },
  }).catch((e) => { rejected = e; });
  ok(rejected !== null, 'the cancelled call rejects on the client', String(rejected));
  const status = await newRunStatus(stateDir, before, 'cancelled');
  ok(status === 'cancelled', 'the server stopped the run (status cancelled)', status);
  const after = await client.callTool({ name: 'run_code', arguments: { code: 'print("still here")' } });
  ok(after.structuredContent?.logs === 'still here\n', 'and serves the next call', after.structuredContent);

  const pid = transport.pid;
  const sessions = readdirSync(`${stateDir}/sessions`).filter((s) => /^[0-9a-f]{32}$/.test(s));
  ok(sessions.length === 1, 'one session on disk while the client is connected', sessions);
  await client.close();
  let alive = true;
  for (let i = 0; i < 100 && alive; i++) {
    try { process.kill(pid, 0); await sleep(100); } catch { alive = false; }
  }
  ok(!alive, 'closing the client (its stdin) ends the server');
  ok(!existsSync(`${stateDir}/sessions/${sessions[0]}`), 'and its session with it');
  ok(/serving MCP over stdio/.test(stderr), 'the server logs to stderr, never to the protocol\'s stdout', stderr.slice(0, 400));
}

try {
  await main();
} catch (e) {
  ok(false, 'the stdio client ran to its end', e.stack || String(e));
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
