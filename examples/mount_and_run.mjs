// mount_and_run.mjs: mount a CSV from a URL into the session's workspace
// with the first run, then read it again in a second run without giving
// the URL: the file stays in the workspace (mounts/) for the session.
//
//   node mount_and_run.mjs http://127.0.0.1:8080/mcp CSV_URL
// (the server fetches CSV_URL: its host must be one the server may reach,
// fetch_allow for one on a private network)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

if (process.argv.length < 4) {
  console.error('usage: node mount_and_run.mjs MCP_URL CSV_URL');
  process.exit(2);
}
const url = new URL(process.argv[2]);
const csvUrl = process.argv[3];
const client = new Client({ name: 'mount-and-run-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));

// 1. Mount the file and count its rows.
const first = await client.callTool({
  name: 'run_code',
  arguments: {
    code: 'import csv\nrows = list(csv.reader(open("mounts/data.csv")))\nprint("rows:", len(rows))',
    files: [{ url: csvUrl, mountPath: 'data.csv' }],
  },
});
console.log(`first run: ${first.structuredContent.status}, ${first.structuredContent.logs.trim()}`);

// 2. Read it again: no URL this time, the workspace still has it.
const second = await client.callTool({
  name: 'run_code',
  arguments: { code: 'print("header:", open("mounts/data.csv").readline().strip())' },
});
console.log(`second run: ${second.structuredContent.status}, ${second.structuredContent.logs.trim()}`);
await client.close();
if (first.structuredContent.status !== 'ok' || second.structuredContent.status !== 'ok') process.exit(1);
