// list_tools.mjs: connect to a runmyscript server and list its tools.
//
//   node list_tools.mjs [http://127.0.0.1:8080/mcp]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:8080/mcp');
const client = new Client({ name: 'list-tools-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));

const server = client.getServerVersion();
console.log(`connected to ${server.name} ${server.version}`);
const { tools } = await client.listTools();
for (const tool of tools) {
  const args = Object.keys(tool.inputSchema.properties ?? {}).join(', ');
  console.log(`- ${tool.name}(${args}): ${tool.description.split('\n')[0]}`);
}
await client.close();
