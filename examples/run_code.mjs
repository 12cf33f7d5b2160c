// run_code.mjs: run a Python script; it prints, and writes a file into
// SCRIPT_OUTPUT, which comes back as an artifact with a URL.
//
//   node run_code.mjs [http://127.0.0.1:8080/mcp]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:8080/mcp');
const client = new Client({ name: 'run-code-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));

const code = `
import os, statistics
data = [3, 1, 4, 1, 5, 9, 2, 6]
print("mean:", statistics.mean(data))
with open(os.path.join(os.environ["SCRIPT_OUTPUT"], "sorted.txt"), "w") as f:
    f.write("\\n".join(map(str, sorted(data))))
`;
const result = await client.callTool({ name: 'run_code', arguments: { code } });
const run = result.structuredContent;
console.log(`status: ${run.status}`);
console.log(`logs: ${run.logs.trim()}`);
for (const a of run.artifacts) console.log(`artifact: ${a.path} (${a.size} bytes) ${a.url}`);
await client.close();
if (run.status !== 'ok') process.exit(1);
