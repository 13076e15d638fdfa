import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { type McpTestServer, startHangingServer, startMcpTestServer } from '../support/mcp-test-server.js';
import { chatRequests, type ResponsesHarness, startResponses, streamResponse } from './support.js';

interface McpItem {
  id: string;
  type: string;
  status: string;
  server_label?: string;
  name?: string;
  arguments?: string;
  output?: string | null;
  error?: string | null;
  approval_request_id?: string | null;
  tools?: Array<{ name: string; description?: string | null; input_schema: Record<string, unknown> }>;
  content?: Array<{ text: string }>;
}
interface Body {
  id: string;
  status: string;
  output: McpItem[];
}

const ADD = (id = 'call_add') => ({
  kind: 'tool-call' as const,
  name: 'add',
  id,
  argumentChunks: ['{"a":2,', '"b":3}'],
});
const ANSWER = { kind: 'answer' as const, text: 'Two and three make 5.' };

/**
 * Remote MCP servers as Responses tools: a real MCP server (the official SDK over Streamable HTTP) on loopback,
 * allowed by the operator's `mcp.allow`; the model is the mock upstream, scripted to call the server's tools.
 */
for (const backend of backends()) {
  describe(`Responses mcp tools (${backend})`, () => {
    let h: ResponsesHarness;
    let mcp: McpTestServer;
    let hanging: Awaited<ReturnType<typeof startHangingServer>>;
    let refused: McpTestServer;

    before(async () => {
      mcp = await startMcpTestServer();
      hanging = await startHangingServer();
      refused = await startMcpTestServer();
      h = await startResponses(backend, {
        config: {
          mcp: { allow: [mcp.origin, hanging.origin], listTimeoutMs: 1000 },
        },
      });
    });
    after(async () => {
      await h?.close();
      await Promise.all([mcp?.close(), hanging?.close(), refused?.close()]);
    });
    beforeEach(() => {
      h.upstream.reset();
      mcp.calls.length = 0;
      mcp.headers.length = 0;
    });

    const tool = (extra: Record<string, unknown> = {}) => ({
      type: 'mcp',
      server_label: 'calc',
      server_url: mcp.url,
      require_approval: 'never',
      ...extra,
    });
    const ask = (tools: unknown[], extra: Record<string, unknown> = {}) => ({
      model: 'PV-TURBO',
      user_id: 'alice',
      skip_cache: true,
      input: 'What is 2 + 3?',
      tools,
      ...extra,
    });

    it('lists the tools, runs the call the model makes, and answers from its output', async () => {
      h.upstream.script(ADD(), ANSWER);
      const res = await h.create<Body>(ask([tool({ headers: { 'X-Tenant-Token': 'tok-1' } })]));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.output.map((o) => o.type),
        ['mcp_list_tools', 'mcp_call', 'message'],
      );
      const [list, call, message] = res.body.output as [McpItem, McpItem, McpItem];
      assert.equal(list.server_label, 'calc');
      assert.deepEqual(list.tools?.map((t) => t.name).sort(), ['add', 'describe_me', 'echo', 'fail', 'flood']);
      assert.equal(list.error, null);
      assert.deepEqual(
        [call.server_label, call.name, call.arguments, call.output, call.error, call.status],
        ['calc', 'add', '{"a":2,"b":3}', '5', null, 'completed'],
      );
      assert.equal(message.content?.[0]?.text, 'Two and three make 5.');
      assert.deepEqual(mcp.calls, [{ name: 'add', args: { a: 2, b: 3 } }]);

      const [first, second] = chatRequests(h.upstream);
      assert.ok(first?.tools?.some((t) => t.function.name === 'add'));
      const answer = second?.messages.at(-1);
      assert.deepEqual([answer?.role, answer?.tool_call_id, answer?.content], ['tool', 'call_add', '5']);
      // The request's headers go to the server; the caller's pvai key never does.
      assert.ok(mcp.headers.length > 0);
      for (const headers of mcp.headers) {
        assert.equal(headers['x-tenant-token'], 'tok-1');
        assert.equal(headers.authorization, undefined);
        assert.ok(!JSON.stringify(headers).includes(h.apiKey));
      }
    });

    it('streams the listing and the call as OpenAI names their events', async () => {
      h.upstream.script(ADD(), ANSWER);
      const res = await streamResponse(h.server, h.apiKey, ask([tool()]));
      assert.equal(res.status, 200, res.text);
      const types = res.events.map((e) => e.data.type);
      for (const expected of [
        'response.mcp_list_tools.in_progress',
        'response.mcp_list_tools.completed',
        'response.mcp_call_arguments.delta',
        'response.mcp_call_arguments.done',
        'response.mcp_call.in_progress',
        'response.mcp_call.completed',
        'response.completed',
      ]) {
        assert.ok(types.includes(expected), `${expected} missing from ${types.join(', ')}`);
      }
      assert.ok(!types.includes('response.function_call_arguments.delta'), 'an MCP call is not a function call');
      const done = res.events.at(-1)?.data.response as Body;
      assert.deepEqual(
        done.output.map((o) => o.type),
        ['mcp_list_tools', 'mcp_call', 'message'],
      );
    });

    it('asks for approval by default; an approval runs the call, listed once per chain', async () => {
      h.upstream.script(ADD());
      const first = await h.create<Body>(ask([tool({ require_approval: undefined })]));
      assert.equal(first.status, 200, first.text);
      assert.deepEqual(
        first.body.output.map((o) => o.type),
        ['mcp_list_tools', 'mcp_approval_request'],
      );
      const request = first.body.output[1] as McpItem;
      assert.deepEqual([request.server_label, request.name, request.arguments], ['calc', 'add', '{"a":2,"b":3}']);
      assert.equal(mcp.calls.length, 0, 'nothing runs before the client approves');

      h.upstream.script(ANSWER);
      const second = await h.create<Body>({
        model: 'PV-TURBO',
        user_id: 'alice',
        skip_cache: true,
        previous_response_id: first.body.id,
        tools: [tool({ require_approval: undefined })],
        input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      });
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(
        second.body.output.map((o) => o.type),
        ['mcp_call', 'message'],
      );
      const call = second.body.output[0] as McpItem;
      assert.deepEqual([call.output, call.approval_request_id], ['5', request.id]);
      assert.deepEqual(mcp.calls, [{ name: 'add', args: { a: 2, b: 3 } }]);
      const sent = chatRequests(h.upstream)[1];
      const answer = sent?.messages.find((m) => m.role === 'tool');
      assert.deepEqual([answer?.tool_call_id, answer?.content], [request.id, '5']);
      assert.ok(
        sent?.tools?.some((t) => t.function.name === 'add'),
        'the chain’s listing still offers the tools',
      );
    });

    it('the openai SDK reads every item of the approval round trip', async () => {
      h.upstream.script(ADD('call_sdk'));
      const tools = [{ type: 'mcp' as const, server_label: 'calc', server_url: mcp.url }];
      const first = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'What is 2 + 3?',
        tools,
        user: 'alice',
      });
      const listed = first.output.find((o) => o.type === 'mcp_list_tools');
      assert.ok(listed?.type === 'mcp_list_tools' && listed.tools.some((t) => t.name === 'add'));
      const request = first.output.find((o) => o.type === 'mcp_approval_request');
      assert.ok(request?.type === 'mcp_approval_request', JSON.stringify(first.output));
      assert.deepEqual([request.server_label, request.name], ['calc', 'add']);

      h.upstream.script(ANSWER);
      const second = await h.client.responses.create({
        model: 'PV-TURBO',
        previous_response_id: first.id,
        tools,
        user: 'alice',
        input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
      });
      const call = second.output.find((o) => o.type === 'mcp_call');
      assert.ok(call?.type === 'mcp_call');
      assert.deepEqual([call.output, call.approval_request_id, call.error ?? null], ['5', request.id, null]);
      assert.equal(second.output_text, 'Two and three make 5.');
    });

    it('a declined call is not run and the model is told so', async () => {
      h.upstream.script(ADD());
      const first = await h.create<Body>(ask([tool({ require_approval: { never: { tool_names: ['echo'] } } })]));
      const request = first.body.output.find((o) => o.type === 'mcp_approval_request') as McpItem;
      assert.ok(request, first.text);
      h.upstream.script({ kind: 'answer', text: 'Understood, I will not add them.' });
      const second = await h.create<Body>({
        model: 'PV-TURBO',
        user_id: 'alice',
        skip_cache: true,
        previous_response_id: first.body.id,
        tools: [tool({ require_approval: 'always' })],
        input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: false, reason: 'not now' }],
      });
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(
        second.body.output.map((o) => o.type),
        ['message'],
      );
      assert.equal(mcp.calls.length, 0);
      const answer = chatRequests(h.upstream)[1]?.messages.find((m) => m.role === 'tool');
      assert.match(answer?.content ?? '', /did not approve.*not now/);
    });

    it('an approval naming no waiting request is 400 naming it', async () => {
      h.upstream.script(ANSWER);
      const first = await h.create<Body>(ask([tool()]));
      const res = await h.create<{ code: string; details: { field: string } }>({
        model: 'PV-TURBO',
        user_id: 'alice',
        previous_response_id: first.body.id,
        tools: [tool()],
        input: [{ type: 'mcp_approval_response', approval_request_id: 'mcpr_nope', approve: true }],
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.details.field, 'input[0].approval_request_id');
    });

    it('allowed_tools keeps the model to those tools; descriptions reach it bounded', async () => {
      h.upstream.script(ANSWER);
      await h.create<Body>(ask([tool({ allowed_tools: ['echo', 'describe_me'] })]));
      const offered = chatRequests(h.upstream)[0]?.tools ?? [];
      assert.deepEqual(offered.map((t) => t.function.name).sort(), ['describe_me', 'echo']);
      const described = offered.find((t) => t.function.name === 'describe_me') as {
        function: { description?: string };
      };
      assert.ok((described.function.description ?? '').length <= 1025);
      // Only the tool list carries a server's words: no system message of the request holds them.
      const system = (chatRequests(h.upstream)[0]?.messages ?? []).filter((m) => m.role === 'system');
      assert.ok(system.every((m) => !(m.content ?? '').includes('Ignore all previous instructions')));
    });

    it('a tool error and an answer past the size limit are failed mcp_call items; the response goes on', async () => {
      h.upstream.script(
        { kind: 'tool-call', name: 'fail', id: 'call_f', argumentChunks: ['{}'] },
        { kind: 'tool-call', name: 'flood', id: 'call_x', argumentChunks: ['{"bytes":10000000}'] },
        ANSWER,
      );
      const res = await h.create<Body>(ask([tool()]));
      assert.equal(res.status, 200, res.text);
      const calls = res.body.output.filter((o) => o.type === 'mcp_call');
      assert.deepEqual(
        calls.map((c) => [c.name, c.status]),
        [
          ['fail', 'failed'],
          ['flood', 'failed'],
        ],
      );
      assert.match(calls[0]?.error ?? '', /the tool broke/);
      // 10 MB past the default cap of 4 MiB per answer.
      assert.match(calls[1]?.error ?? '', /4194304 bytes/);
      assert.equal(res.body.output.at(-1)?.type, 'message');
    });

    it('a server that hangs, and one on a loopback address not allowed, are listings with an error', async () => {
      h.upstream.script(ANSWER);
      const started = Date.now();
      const res = await h.create<Body>(
        ask([
          { type: 'mcp', server_label: 'slow', server_url: hanging.url, require_approval: 'never' },
          { type: 'mcp', server_label: 'private', server_url: refused.url, require_approval: 'never' },
        ]),
      );
      assert.equal(res.status, 200, res.text);
      assert.ok(Date.now() - started < 10_000, 'the hanging server is given up on within its time');
      const lists = res.body.output.filter((o) => o.type === 'mcp_list_tools');
      assert.deepEqual(
        lists.map((l) => [l.server_label, l.status]),
        [
          ['slow', 'failed'],
          ['private', 'failed'],
        ],
      );
      assert.match(lists[0]?.error ?? '', /timed out/i);
      assert.match(lists[1]?.error ?? '', /loopback/);
      assert.equal(refused.calls.length + refused.headers.length, 0, 'nothing was sent to the refused server');
      assert.equal(chatRequests(h.upstream)[0]?.tools, undefined);
      assert.equal(res.body.output.at(-1)?.type, 'message');
    });

    it('server_url "pvai" is pvai’s own tools, for the request’s end user, without a network hop', async () => {
      h.upstream.script(
        { kind: 'tool-call', name: 'remember', id: 'call_r', argumentChunks: ['{"content":"Alice likes tea"}'] },
        ANSWER,
      );
      const res = await h.create<Body>(
        ask([{ type: 'mcp', server_label: 'pvai', server_url: 'pvai', require_approval: 'never' }]),
      );
      assert.equal(res.status, 200, res.text);
      const [list, call] = res.body.output as [McpItem, McpItem];
      assert.ok(list.tools?.some((t) => t.name === 'search_documents'));
      assert.equal(call.status, 'completed', call.error ?? '');
      const memories = await h.server.request<{ data: Array<{ content: string }> }>('GET', '/z1/memory?user_id=alice', {
        apiKey: h.apiKey,
      });
      assert.ok(
        memories.body.data.some((m) => m.content.includes('Alice likes tea')),
        memories.text,
      );
    });

    it('refuses what it cannot connect to as asked: 400 naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ connector_id: 'connector_gmail' }, 'tools[0].connector_id'],
        [{ server_url: 'ftp://example.com/mcp' }, 'tools[0].server_url'],
        [{ server_url: 'https://user:pw@example.com/mcp' }, 'tools[0].server_url'],
        [{ headers: { Host: 'elsewhere' } }, 'tools[0].headers.Host'],
        [{ server_label: undefined }, 'tools[0].server_label'],
      ];
      for (const [extra, field] of cases) {
        const res = await h.create<{ code: string; details: { field: string } }>(ask([tool(extra)]));
        assert.equal(res.status, 400, `${JSON.stringify(extra)}: ${res.text}`);
        assert.equal(res.body.details.field, field, JSON.stringify(extra));
      }
      const twice = await h.create<{ details: { field: string } }>(ask([tool(), tool()]));
      assert.equal(twice.status, 400, twice.text);
      assert.equal(twice.body.details.field, 'tools[1].server_label');
    });
  });
}
