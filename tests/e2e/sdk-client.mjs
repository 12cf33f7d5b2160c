// sdk-client.mjs: runmyscript's MCP server driven by the official TypeScript
// SDK client (@modelcontextprotocol/sdk, pinned in tests/package.json), as an
// agent would. Prints TAP. Commands:
//
//   (none)  connect, list the tools, run_code with a progress token and
//           logging, download an artifact through its resource_link,
//           run_my_script with the seed example, a file of the workspace as
//           a resource (listed, read, completed, followed), cancel a call,
//           end the session (tests/e2e/sdk.sh)
//   files   mount_file with progress, run_code with files, persist_artifact,
//           a failed download (tests/e2e/files.sh; FIX_URL is the fixture
//           server, DAV where its PUTs land, SHA_MID and SHA_CSV the
//           SHA-256 of slow/mid.bin and data/table.csv)
//
//   MCP_URL=http://127.0.0.1:PORT/mcp STATE_DIR=... TOP=... node sdk-client.mjs [files]
import { readFileSync, existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { runIds, newRunStatus } from './runs.mjs';

const url = new URL(process.env.MCP_URL);
const stateDir = process.env.STATE_DIR;
const top = process.env.TOP;

let n = 0;
let failed = 0;
function ok(cond, name, extra) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? '' : 'not '}ok ${n} - ${name}`);
  if (!cond && extra !== undefined) console.log(`#   ${JSON.stringify(extra)?.slice(0, 2000)}`);
}

async function main() {
  const client = new Client({ name: 'runmyscript-e2e', version: '1.0.0' }, { capabilities: {} });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (m) => logs.push(m.params));
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  ok(true, 'connect: initialize and notifications/initialized');
  ok(client.getServerVersion()?.name === 'runmyscript', 'serverInfo.name', client.getServerVersion());
  const caps = client.getServerCapabilities();
  ok(caps?.tools && caps?.logging, 'capabilities: tools and logging', caps);
  ok(transport.protocolVersion === '2025-11-25', 'negotiated 2025-11-25', transport.protocolVersion);
  ok(/^[0-9a-f]{32}$/.test(transport.sessionId ?? ''), 'a session id', transport.sessionId);
  ok((client.getInstructions() ?? '').includes('SCRIPT_OUTPUT'), 'instructions');

  await client.setLoggingLevel('debug');
  ok(true, 'logging/setLevel debug');

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  ok(JSON.stringify(names) === JSON.stringify(['run_code', 'run_cell', 'reset_kernel', 'save_kernel', 'run_my_script', 'list_dir', 'preview_file',
    'mount_file', 'write_file', 'persist_artifact']), 'tools/list (serve has kernels: run_cell, reset_kernel and save_kernel)', names);
  ok(tools.every((t) => t.description && t.inputSchema?.type === 'object' && t.outputSchema), 'descriptions and schemas');

  // run_code with progress and logging; the SDK checks structuredContent
  // against the outputSchema it cached from tools/list.
  const progress = [];
  const code = [
    'import os, sys',
    'print("first line")',
    'print("a warning", file=sys.stderr)',
    'out = os.environ["SCRIPT_OUTPUT"]',
    'with open(os.path.join(out, "squares.csv"), "w") as f:',
    '    f.write("n,square\\n" + "".join(f"{i},{i*i}\\n" for i in range(10)))',
    'print("last line")',
  ].join('\n');
  const res = await client.callTool({ name: 'run_code', arguments: { code } }, undefined, {
    onprogress: (p) => progress.push(p),
    resetTimeoutOnProgress: true,
    timeout: 120_000,
  });
  const sc = res.structuredContent;
  ok(res.isError === false && sc?.status === 'ok', 'run_code: ok', sc);
  ok(progress.length >= 4, `progress notifications (${progress.length})`, progress);
  ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress), 'progress increases', progress);
  ok(JSON.stringify(progress.map((p) => p.message)) ===
     JSON.stringify(['queued', 'resolving the environment', 'running', 'collecting artifacts', 'done: ok']),
     'progress names the phases', progress.map((p) => p.message));
  // Within a stream the order is kept; across the two streams writes closer
  // together than the reader wakes up may come grouped by stream (doc/architecture.md).
  const mine = logs.filter((l) => l.logger === 'stdout' || l.logger === 'stderr');
  const byStream = (s) => JSON.stringify(mine.filter((l) => l.logger === s).map((l) => [l.level, l.data]));
  ok(byStream('stdout') === JSON.stringify([['info', 'first line'], ['info', 'last line']]) &&
     byStream('stderr') === JSON.stringify([['warning', 'a warning']]),
     'log notifications: stdout lines at info, stderr at warning, each stream in order', mine);
  // The log is one byte stream of both: a print to stderr can be two
  // writes (text, then newline) that another stream's write falls between.
  ok(sc?.logs?.startsWith('first line\n') && sc.logs.includes('a warning') && sc.logs.includes('last line\n') &&
     sc.logs.length === 'first line\na warning\nlast line\n'.length, 'structuredContent.logs has both streams', sc?.logs);
  ok(JSON.stringify(sc?.artifacts?.map((a) => [a.path, a.mime, a.summary])) ===
     JSON.stringify([['squares.csv', 'text/csv', 'CSV, 10 rows x 2 columns; header: n, square']]), 'the artifact, typed and summarised', sc?.artifacts);
  const link = res.content.find((c) => c.type === 'resource_link' && c.name === 'squares.csv');
  ok(link?.uri?.startsWith(`${url.origin}/artifacts/${sc?.run_id}/`), 'a resource_link with the HTTP URL', link);
  const dl = link ? await fetch(link.uri) : null;
  const body = dl ? await dl.text() : '';
  ok(dl?.status === 200 && body.startsWith('n,square\n0,0\n1,1\n') && body.endsWith('9,81\n'), 'the artifact downloads through its resource_link', body.slice(0, 80));
  ok(dl?.headers.get('content-type')?.startsWith('text/csv'), 'with its MIME type', dl?.headers.get('content-type'));
  const zipLink = res.content.find((c) => c.type === 'resource_link' && c.name === 'artifacts.zip');
  const zip = zipLink ? Buffer.from(await (await fetch(zipLink.uri)).arrayBuffer()) : Buffer.alloc(0);
  ok(zip.subarray(0, 4).toString('latin1') === 'PK\x03\x04', 'the zip downloads', zipLink);

  // run_my_script with the seed example. The seed script needs PIL, which
  // the server cannot install until the dependency work lands; this is its
  // standard-library twin (tests/fixtures/scripts/seed-stdlib.py): the same
  // input, contract and output file.
  const seedCode = readFileSync(`${top}/tests/fixtures/scripts/seed-stdlib.py`, 'utf8');
  const seedInput = readFileSync(`${top}/tests/fixtures/seeds/run_my_script_test_input.json`, 'utf8');
  const seed = await client.callTool({ name: 'run_my_script', arguments: { code: seedCode, user_input: seedInput } });
  const ss = seed.structuredContent;
  ok(seed.isError === false && ss?.status === 'ok', 'run_my_script (seed, stdlib variant): ok', ss);
  ok(ss?.logs?.includes('Image flipped and saved as flipped.png.'), 'the seed\'s log line', ss?.logs);
  const png = ss?.artifacts?.find((a) => a.path === 'flipped.png');
  ok(png?.mime === 'image/png' && png?.summary === 'PNG image 256x256', 'flipped.png, a 256x256 PNG', png);
  const img = seed.content.find((c) => c.type === 'image');
  ok(img?.mimeType === 'image/png' && Buffer.from(img.data, 'base64').length === png?.size, 'the image inline', img?.mimeType);
  const pngLink = seed.content.find((c) => c.type === 'resource_link' && c.name === 'flipped.png');
  const pngBytes = pngLink ? Buffer.from(await (await fetch(pngLink.uri)).arrayBuffer()) : Buffer.alloc(0);
  ok(img && pngBytes.equals(Buffer.from(img.data, 'base64')), 'the download is the same PNG');

  // The seed itself, with PIL: the server detects the import and installs
  // pillow from the test wheelhouse (make check builds it from Debian's
  // python3-pil; no package index is reached).
  if (process.env.HAVE_PILLOW === '1') {
    const realCode = readFileSync(`${top}/tests/fixtures/seeds/run_my_script_test.py`, 'utf8');
    const phases = [];
    const real = await client.callTool({ name: 'run_my_script', arguments: { code: realCode, user_input: seedInput } },
      undefined, { onprogress: (p) => phases.push(p.message), resetTimeoutOnProgress: true, timeout: 300_000 });
    const rs = real.structuredContent;
    ok(real.isError === false && rs?.status === 'ok', 'run_my_script with the seed script itself (PIL): ok', rs?.error ?? rs?.logs);
    ok(rs?.requirements?.some((r) => r.startsWith('pillow==')), 'pillow was detected and installed', rs?.requirements);
    ok(phases.some((m) => m?.startsWith('installing requirements')) || rs?.env_cache === 'hit', 'the installing phase (or a cached environment)', phases);
    const fp = rs?.artifacts?.find((a) => a.path === 'flipped.png');
    ok(fp?.summary === 'PNG image 256x256', 'flipped.png, 256x256', fp);
  } else {
    n++;
    console.log(`ok ${n} # SKIP no pillow in the test wheelhouse (python3-pil missing): the PIL seed is not run`);
  }

  // A failing script is a result, not an exception.
  const bad = await client.callTool({ name: 'run_code', arguments: { code: 'raise ValueError("no good")' } });
  ok(bad.isError === true && bad.structuredContent?.status === 'error' &&
     bad.structuredContent.logs.includes('ValueError: no good'), 'a failing script: isError with the traceback', bad.structuredContent);
  // An import nothing provides: the server tries to install it; that fails.
  const missing = await client.callTool({ name: 'run_code', arguments: { code: 'import nonexistent_module_xyz' } });
  ok(missing.isError === true && missing.structuredContent?.status === 'install_failed' &&
     missing.structuredContent.failed_requirement === 'nonexistent-module-xyz',
     'an uninstallable import: install_failed, isError, the requirement named', missing.structuredContent);

  // Files persist in the session's workspace; list_dir and preview_file see them.
  await client.callTool({ name: 'run_code', arguments: { code: 'open("notes.md", "w").write("# notes\\nkept\\n")' } });
  const ls = await client.callTool({ name: 'list_dir', arguments: {} });
  ok(ls.structuredContent?.entries?.some((e) => e.name === 'notes.md' && e.type === 'file'), 'list_dir sees the file', ls.structuredContent);
  const pv = await client.callTool({ name: 'preview_file', arguments: { relative_path: 'notes.md' } });
  ok(pv.structuredContent?.text === '# notes\nkept\n', 'preview_file shows it', pv.structuredContent);

  // The same file as a resource: listed, read, completed, followed.
  const uri = `workspace://${transport.sessionId}/notes.md`;
  const rl = await client.listResources();
  ok(rl.resources?.some((r) => r.uri === uri && r.mimeType), 'resources/list names it', rl);
  const rr = await client.readResource({ uri });
  ok(rr.contents?.[0]?.text === '# notes\nkept\n', 'resources/read reads it', rr);
  const cc = await client.complete({ ref: { type: 'ref/resource', uri: 'workspace://{workspace}/{+path}' }, argument: { name: 'path', value: 'no' } });
  ok(JSON.stringify(cc.completion?.values) === '["notes.md"]', 'completion/complete completes its path', cc);
  const updated = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (m) => updated.push(m.params.uri));
  await client.subscribeResource({ uri });
  await client.callTool({ name: 'run_code', arguments: { code: 'open("notes.md", "a").write("more\\n")' } });
  ok(JSON.stringify(updated) === JSON.stringify([uri]), 'a run that changes it: notifications/resources/updated', updated);

  // Cancel: the SDK sends notifications/cancelled when the signal aborts; the
  // server stops the run and sends no result.
  const before = runIds(stateDir);
  const ac = new AbortController();
  let rejected = null;
  const slow = client.callTool({ name: 'run_code', arguments: { code: 'import time\ntime.sleep(60)' } }, undefined, {
    signal: ac.signal,
    onprogress: (p) => { if (p.message === 'running') ac.abort('changed my mind'); },
  }).catch((e) => { rejected = e; });
  await slow;
  ok(rejected !== null, 'the cancelled call rejects on the client', String(rejected));
  const status = await newRunStatus(stateDir, before, 'cancelled', 20000);
  ok(status === 'cancelled', 'the server stopped the run (status cancelled)', status);

  // End the session: DELETE, then the id is gone.
  const sid = transport.sessionId;
  await transport.terminateSession();
  ok(transport.sessionId === undefined, 'terminateSession');
  const after = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': sid },
    body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
  });
  ok(after.status === 404, 'the ended session is 404', after.status);
  ok(!existsSync(`${stateDir}/sessions/${sid}`), 'its workspace is removed');
  await client.close();
}

// mount_file, run_code's files and persist_artifact, as an agent calls them.
async function files() {
  const fix = process.env.FIX_URL;
  const client = new Client({ name: 'runmyscript-e2e-files', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  ok(byName.mount_file?.outputSchema && byName.persist_artifact?.outputSchema &&
     JSON.stringify(byName.mount_file.inputSchema.required) === JSON.stringify(['url', 'mount_path']) &&
     JSON.stringify(byName.persist_artifact.inputSchema.required) === JSON.stringify(['relative_path', 'presigned_url']),
     'tools/list: mount_file and persist_artifact with their schemas', [byName.mount_file, byName.persist_artifact]);

  // The SDK validates structuredContent against the outputSchema it cached.
  const progress = [];
  const m = await client.callTool({ name: 'mount_file', arguments: { url: `${fix}/slow/mid.bin`, mount_path: 'sdk/mid.bin' } },
    undefined, { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 60_000 });
  const ms = m.structuredContent;
  ok(m.isError === false && ms?.mounted_as === 'mounts/sdk/mid.bin' && ms.bytes === 4096 && ms.sha256 === process.env.SHA_MID,
     'mount_file: {mounted_as, bytes, sha256} of the bytes served', ms);
  ok(progress.length >= 2 && progress[0].message === `downloading ${fix}/slow/mid.bin` &&
     progress.slice(1).every((p) => p.progress > 0 && p.message.startsWith(`downloading ${fix}/slow/mid.bin: `)),
     `progress notifications while downloading (${progress.length})`, progress);
  ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress), 'progress increases', progress);
  const again = await client.callTool({ name: 'mount_file', arguments: { url: `${fix}/slow/mid.bin`, mount_path: 'sdk/mid.bin' } });
  ok(again.isError === false && again.structuredContent?.sha256 === process.env.SHA_MID &&
     again.content[0].text.startsWith('already mounted'), 'the same mount again: a no-op', again.content);

  const code = [
    'import hashlib, os',
    'print("csv", hashlib.sha256(open("mounts/sdk/table.csv", "rb").read()).hexdigest())',
    'print("mid", hashlib.sha256(open("mounts/sdk/mid.bin", "rb").read()).hexdigest())',
    'open(os.path.join(os.environ["SCRIPT_OUTPUT"], "report.txt"), "w").write("report\\n" * 100)',
  ].join('\n');
  const runProgress = [];
  const r = await client.callTool({ name: 'run_code', arguments: { code, files: [{ url: `${fix}/data/table.csv`, mountPath: 'sdk/table.csv' }] } },
    undefined, { onprogress: (p) => runProgress.push(p), resetTimeoutOnProgress: true, timeout: 120_000 });
  const rs = r.structuredContent;
  ok(r.isError === false && rs?.logs?.includes(`csv ${process.env.SHA_CSV}`) && rs.logs.includes(`mid ${process.env.SHA_MID}`),
     'run_code with files: the script reads both mounted files', rs);
  ok(JSON.stringify(rs?.artifacts?.map((a) => a.path)) === JSON.stringify(['report.txt']), 'mounted files are not artifacts', rs?.artifacts);
  ok(runProgress.some((p) => p.message?.startsWith(`downloading files[0] ${fix}/data/table.csv`)) &&
     runProgress.every((p, i) => i === 0 || p.progress > runProgress[i - 1].progress),
     'run_code reports the download, then the phases, progress increasing', runProgress.map((p) => [p.progress, p.message]));

  const up = await client.callTool({ name: 'persist_artifact', arguments: { relative_path: 'report.txt', presigned_url: `${fix}/put/sdk/report.txt?X-Amz-Signature=SECRET` } });
  ok(up.isError === false && up.structuredContent?.uploaded_bytes === 700 && up.structuredContent?.status === 201,
     'persist_artifact: {uploaded_bytes, status}', up.structuredContent);
  const landed = existsSync(`${process.env.DAV}/put/sdk/report.txt`) ? readFileSync(`${process.env.DAV}/put/sdk/report.txt`, 'utf8') : null;
  ok(landed === 'report\n'.repeat(100), 'the PUT landed intact');
  ok(!JSON.stringify(up).includes('SECRET'), 'the query is not echoed');

  const bad = await client.callTool({ name: 'mount_file', arguments: { url: `${fix}/data/missing.bin?token=SECRET`, mount_path: 'sdk/missing.bin' } });
  ok(bad.isError === true && bad.content[0].text === `mount_file: fetch ${fix}/data/missing.bin: HTTP 404` && !JSON.stringify(bad).includes('SECRET'),
     'a 404: isError naming the URL without its query, and the status', bad.content);
  await transport.terminateSession();
  await client.close();
}

try {
  if (process.argv[2] === 'files') await files();
  else await main();
} catch (e) {
  ok(false, `unexpected exception: ${e?.stack ?? e}`);
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
