// session_persistence.mjs: the session's workspace outlives each call: a
// first run leaves a module and a data file, a second run imports the one
// and reads the other.
//
//   node session_persistence.mjs [http://127.0.0.1:8080/mcp]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:8080/mcp');
const client = new Client({ name: 'session-persistence-example', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
console.log(`session ${transport.sessionId}`);

const first = await client.callTool({
  name: 'run_code',
  arguments: {
    code: [
      'open("helpers.py", "w").write("def greet(name):\\n    return f\'hello, {name}\'\\n")',
      'open("counter.txt", "w").write("1")',
      'print("saved helpers.py and counter.txt")',
    ].join('\n'),
  },
});
console.log(`first call: ${first.structuredContent.logs.trim()}`);

const second = await client.callTool({
  name: 'run_code',
  arguments: {
    code: [
      'from helpers import greet',
      'n = int(open("counter.txt").read()) + 1',
      'open("counter.txt", "w").write(str(n))',
      'print(greet("workspace"), "- counter is now", n)',
    ].join('\n'),
  },
});
console.log(`second call: ${second.structuredContent.logs.trim()}`);
await client.close(); // the session (and its workspace) stays until it expires
if (first.structuredContent.status !== 'ok' || second.structuredContent.status !== 'ok') process.exit(1);
