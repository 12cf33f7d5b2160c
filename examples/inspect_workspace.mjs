// inspect_workspace.mjs: a run leaves files in the session's workspace;
// list_dir lists a folder of it and preview_file shows the start of a file.
//
//   node inspect_workspace.mjs [http://127.0.0.1:8080/mcp]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:8080/mcp');
const client = new Client({ name: 'inspect-workspace-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));

const code = `
import os
out = os.environ["SCRIPT_OUTPUT"]
with open(os.path.join(out, "report.csv"), "w") as f:
    f.write("month,sales\\njan,10\\nfeb,12\\nmar,9\\n")
with open(os.path.join(out, "notes.txt"), "w") as f:
    f.write("three months of sales\\n")
print("wrote 2 files")
`;
const run = await client.callTool({ name: 'run_code', arguments: { code } });
console.log(`run: ${run.structuredContent.status}`);

const listing = await client.callTool({ name: 'list_dir', arguments: { dir_path: 'output' } });
for (const e of listing.structuredContent.entries) console.log(`output/${e.name} (${e.type}, ${e.size} bytes)`);

const preview = await client.callTool({ name: 'preview_file', arguments: { relative_path: 'output/report.csv' } });
console.log('preview of output/report.csv:');
console.log(preview.structuredContent.text.trimEnd());
await client.close();
if (run.structuredContent.status !== 'ok' || listing.isError || preview.isError) process.exit(1);
