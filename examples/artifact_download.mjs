// artifact_download.mjs: a run writes output/plots/chart.svg; the file is
// fetched by GET /artifacts/PATH with the session's id in the
// mcp-session-id header (each artifact's own url works too, without it).
//
//   node artifact_download.mjs [http://127.0.0.1:8080/mcp] [SAVE_AS]
import { writeFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:8080/mcp');
const saveAs = process.argv[3] ?? 'chart.svg';
const client = new Client({ name: 'artifact-download-example', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);

const code = `
import os
bars = [3, 7, 5]
svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="90" height="80">']
svg += [f'<rect x="{10 + 25 * i}" y="{80 - 10 * v}" width="20" height="{10 * v}"/>' for i, v in enumerate(bars)]
svg.append("</svg>")
os.makedirs(os.path.join(os.environ["SCRIPT_OUTPUT"], "plots"), exist_ok=True)
with open(os.path.join(os.environ["SCRIPT_OUTPUT"], "plots", "chart.svg"), "w") as f:
    f.write("\\n".join(svg))
print("chart written")
`;
const run = await client.callTool({ name: 'run_code', arguments: { code } });
console.log(`run: ${run.structuredContent.status}`);

const res = await fetch(new URL('/artifacts/plots/chart.svg', url), {
  headers: { 'mcp-session-id': transport.sessionId },
});
if (!res.ok) throw new Error(`GET /artifacts/plots/chart.svg: HTTP ${res.status}`);
const body = Buffer.from(await res.arrayBuffer());
writeFileSync(saveAs, body);
console.log(`downloaded plots/chart.svg (${res.headers.get('content-type')}, ${body.length} bytes) to ${saveAs}`);
await client.close();
