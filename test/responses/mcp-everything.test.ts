import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../support/processes.js';
import { chatRequests, type ResponsesHarness, startResponses, streamResponse } from './support.js';

interface Item {
  type: string;
  status: string;
  name?: string;
  output?: string | null;
  error?: string | null;
  tools?: Array<{ name: string }>;
}

/**
 * The MCP project's own reference server (`@modelcontextprotocol/server-everything`, Streamable HTTP with sessions
 * and a server-to-client stream), unmodified, as a remote server of a Responses `mcp` tool.
 */
describe('Responses mcp tools against server-everything', () => {
  let everything: ChildProcess;
  let url: string;
  let h: ResponsesHarness;

  before(async () => {
    const pkg = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json');
    const port = await freePort();
    everything = spawn(process.execPath, [join(dirname(pkg), 'dist', 'index.js'), 'streamableHttp'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    everything.stderr?.setEncoding('utf8');
    const listening = new Promise<void>((resolve, reject) => {
      everything.stderr?.on('data', (chunk: string) => {
        log += chunk;
        if (log.includes('listening on port')) resolve();
      });
      everything.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${log}`)));
    });
    await listening;
    const origin = `http://127.0.0.1:${port}`;
    url = `${origin}/mcp`;
    h = await startResponses('sqlite', { config: { mcp: { allow: [origin] } } });
  });
  after(async () => {
    await h?.close();
    if (everything && everything.exitCode === null) {
      everything.kill();
      await once(everything, 'exit');
    }
  });

  const ask = () => ({
    model: 'PV-TURBO',
    user_id: 'alice',
    skip_cache: true,
    input: 'Echo hello, then add 19 and 23.',
    tools: [{ type: 'mcp', server_label: 'everything', server_url: url, require_approval: 'never' }],
  });

  it('lists its tools and runs echo and get-sum as the model calls them', async () => {
    h.upstream.script(
      { kind: 'tool-call', name: 'echo', id: 'call_e', argumentChunks: ['{"message":"hello"}'] },
      { kind: 'tool-call', name: 'get-sum', id: 'call_s', argumentChunks: ['{"a":19,"b":23}'] },
      { kind: 'answer', text: 'Done.' },
    );
    const res = await h.create<{ output: Item[] }>(ask());
    assert.equal(res.status, 200, res.text);
    const [list, echo, sum] = res.body.output as [Item, Item, Item];
    assert.equal(list.type, 'mcp_list_tools');
    assert.equal(list.error, null);
    for (const name of ['echo', 'get-sum', 'get-structured-content']) {
      assert.ok(
        list.tools?.some((t) => t.name === name),
        name,
      );
    }
    assert.deepEqual(
      [echo.type, echo.name, echo.output, echo.status],
      ['mcp_call', 'echo', 'Echo: hello', 'completed'],
    );
    assert.deepEqual([sum.name, sum.status], ['get-sum', 'completed']);
    assert.match(sum.output ?? '', /42/);
    const offered = chatRequests(h.upstream)[0]?.tools?.map((t) => t.function.name) ?? [];
    assert.ok(offered.includes('get-sum'));
  });

  it('streams the same, ending completed', async () => {
    h.upstream.script(
      { kind: 'tool-call', name: 'echo', id: 'call_e', argumentChunks: ['{"message":"again"}'] },
      { kind: 'answer', text: 'Done.' },
    );
    const res = await streamResponse(h.server, h.apiKey, ask());
    assert.equal(res.status, 200, res.text);
    const done = res.events.at(-1)?.data as unknown as { type: string; response: { output: Item[] } };
    assert.equal(done.type, 'response.completed');
    const call = done.response.output.find((o) => o.type === 'mcp_call');
    assert.equal(call?.output, 'Echo: again');
  });
});
