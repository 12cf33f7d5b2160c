// sdk-ask.mjs: a script's input() answered by the official TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in tests/package.json) through
// elicitation, over Streamable HTTP (MCP_URL set) or stdio (RUNMYSCRIPT
// set, `runmyscript mcp`): a client that declares the capability gets
// elicitation/create with input()'s prompt, and its answer is the script's
// next line; a decline is EOF; a client without the capability is never
// asked (EOF at once, as before). Prints TAP (tests/e2e/ask.sh).
//
//   MCP_URL=http://127.0.0.1:PORT/mcp [MCP_TOKEN=...] node sdk-ask.mjs
//   RUNMYSCRIPT=... node sdk-ask.mjs
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const { MCP_URL, MCP_TOKEN, RUNMYSCRIPT } = process.env;
const over = MCP_URL ? 'http' : 'stdio';
let n = 0;
let failed = 0;
function ok(cond, name, extra) {
  n++;
  if (!cond) failed++;
  console.log(`${cond ? '' : 'not '}ok ${n} - ${over}: ${name}`);
  if (!cond && extra !== undefined) console.log(`#   ${JSON.stringify(extra)?.slice(0, 2000)}`);
}

function transport() {
  if (MCP_URL) {
    const headers = MCP_TOKEN ? { Authorization: `Bearer ${MCP_TOKEN}` } : {};
    return new StreamableHTTPClientTransport(new URL(MCP_URL), { requestInit: { headers } });
  }
  const env = {};
  for (const k of Object.keys(process.env)) if (k.startsWith('RUNMYSCRIPT_')) env[k] = process.env[k];
  return new StdioClientTransport({ command: RUNMYSCRIPT, args: ['mcp'], env, stderr: 'ignore' });
}

// A client; with answer (a function of the request's params giving the
// result), one that declares elicitation.
async function connect(answer) {
  const client = new Client({ name: 'runmyscript-ask-e2e', version: '1.0.0' },
    { capabilities: answer ? { elicitation: {} } : {} });
  const asked = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return answer(req.params, asked.length);
    });
  }
  await client.connect(transport());
  return { client, asked };
}

const script = 'name = input("Your name? ")\nprint("hello", name)\n';
const eofScript = 'try:\n    input("Anything? ")\nexcept EOFError:\n    print("EOF seen")\n';

async function main() {
  // Answered.
  let { client, asked } = await connect(() => ({ action: 'accept', content: { answer: 'Ada' } }));
  let r = await client.callTool({ name: 'run_my_script', arguments: { code: script } });
  let s = r.structuredContent ?? {};
  ok(asked.length === 1 && asked[0].message === 'Your name? ', 'elicitation/create with input()\'s prompt', asked);
  const schema = asked[0]?.requestedSchema ?? {};
  ok(schema.type === 'object' && schema.properties?.answer?.type === 'string' &&
     JSON.stringify(schema.required) === '["answer"]', 'a schema of one string field, answer', schema);
  ok(s.status === 'ok' && /hello Ada/.test(s.logs ?? ''), 'accept: the answer is the script\'s next line', s);
  ok(JSON.stringify(s.input) === '{"questions":1,"answered":1,"closed":null}', 'the result counts it', s.input);

  // Two questions in one run, each its own prompt.
  asked.length = 0;
  r = await client.callTool({ name: 'run_code', arguments: { code: 'a = input("A? ")\nb = input("B? ")\nprint(a + b)\n' } });
  s = r.structuredContent ?? {};
  ok(asked.map((p) => p.message).join('|') === 'A? |B? ' && /AdaAda/.test(s.logs ?? ''),
     'run_code: two questions in one run', { asked, logs: s.logs });
  await client.close();

  // Declined: EOF.
  ({ client, asked } = await connect(() => ({ action: 'decline' })));
  r = await client.callTool({ name: 'run_my_script', arguments: { code: eofScript } });
  s = r.structuredContent ?? {};
  ok(asked.length === 1 && /EOF seen/.test(s.logs ?? '') && s.input?.closed === 'declined',
     'decline: the script reads EOF, input.closed declined', s);
  await client.close();

  // No capability: never asked, EOF at once.
  ({ client } = await connect(null));
  r = await client.callTool({ name: 'run_my_script', arguments: { code: eofScript } });
  s = r.structuredContent ?? {};
  ok(s.status === 'ok' && /EOF seen/.test(s.logs ?? '') && s.input === null,
     'a client without elicitation: EOF at once, input null', s);
  await client.close();
}

main().then(() => {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}, (e) => {
  ok(false, `no exception: ${e?.stack ?? e}`);
  console.log(`1..${n}`);
  process.exit(1);
});
