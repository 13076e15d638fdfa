import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { chatRequests, type ResponsesHarness, startResponses } from '../responses/support.js';
import { eventually } from '../support/eventually.js';
import { type McpTestServer, startMcpTestServer } from '../support/mcp-test-server.js';
import {
  type Collector,
  collectorAvailable,
  type ReceivedSpan,
  startCollector,
  tag,
} from '../support/otel-collector.js';

/** Words that appear only in the prompts and answers: no span attribute may hold them by default. */
const PROMPT_SECRET = 'zanzibar-marmalade';
const ANSWER_SECRET = 'quokka-lighthouse';

const newTraceparent = () => {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-01` };
};

const parentOf = (span: ReceivedSpan | undefined) => span?.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.operationName === name);

/**
 * OpenTelemetry traces over real HTTP, read back from a real OpenTelemetry Collector (OTLP/HTTP receiver, the file
 * exporter's OTLP JSON): the model is the mock upstream, the tool a real MCP server. Tracing does not depend on the
 * database: SQLite only.
 */
describe('OpenTelemetry traces (sqlite, OpenTelemetry Collector)', {
  skip: !collectorAvailable() && 'no OpenTelemetry Collector: set PVAI_OTELCOL_BIN',
}, () => {
  let collector: Collector;
  let mcp: McpTestServer;
  let h: ResponsesHarness;

  /** The spans of a trace once the collector has written the one named `last` (spans are batched: 100 ms here). */
  const traceOf = async (traceId: string, last: string) => {
    const spans = await eventually(
      () => collector.spans(traceId),
      (found) => found.some((s) => s.operationName === last),
      15_000,
    );
    assert.ok(spans.length > 0, `trace ${traceId} never reached the collector`);
    return spans;
  };

  before(async () => {
    collector = await startCollector();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.otlpUrl;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
    mcp = await startMcpTestServer();
    h = await startResponses('sqlite', { config: { mcp: { allow: [mcp.origin] } }, defaultText: ANSWER_SECRET });
  });
  after(async () => {
    await h?.close();
    await mcp?.close();
    await collector?.stop();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_BSP_SCHEDULE_DELAY;
  });
  beforeEach(() => h.upstream.reset());

  it('a RAG chat with memory: the server span continues the incoming trace, with its stages, model call and the upstream on it', async () => {
    const user = { user_id: 'alice' };
    const doc = await h.server.request('POST', '/z1/rag/documents', {
      apiKey: h.apiKey,
      body: { ...user, content: 'The ferry to Skye leaves from Mallaig pier every morning at seven.' },
    });
    assert.equal(doc.status, 201, doc.text);
    const memory = await h.server.request('POST', '/z1/memory', {
      apiKey: h.apiKey,
      body: { ...user, content: 'Alice takes the ferry to Skye every summer.' },
    });
    assert.equal(memory.status, 201, memory.text);

    const { traceId, parentId, traceparent } = newTraceparent();
    const res = await h.server.request<{ choices: Array<{ message: { content: string } }> }>(
      'POST',
      '/z1/chat/completions',
      {
        apiKey: h.apiKey,
        headers: { traceparent },
        body: {
          model: 'PV-TURBO',
          ...user,
          use_rag: true,
          max_tokens: 64,
          temperature: 0.2,
          messages: [{ role: 'user', content: `When does the ferry to Skye leave? ${PROMPT_SECRET}` }],
        },
      },
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.choices[0]?.message.content, ANSWER_SECRET);

    const spans = await traceOf(traceId, 'createChatCompletion');
    const [server] = named(spans, 'createChatCompletion');
    assert.ok(server, `no server span in ${spans.map((s) => s.operationName).join(', ')}`);
    assert.equal(server.traceID, traceId, 'the incoming trace goes on');
    assert.equal(parentOf(server), parentId, "the server span is the incoming parent's child");
    assert.equal(tag(server, 'span.kind'), 'server');
    assert.equal(tag(server, 'http.request.method'), 'POST');
    assert.equal(tag(server, 'url.path'), '/z1/chat/completions');
    assert.equal(tag(server, 'http.route'), '/z1/chat/completions');
    assert.equal(tag(server, 'http.response.status_code'), 200);
    assert.equal(tag(server, 'pvai.operation_id'), 'createChatCompletion');
    assert.equal(tag(server, 'pvai.account_id'), h.accountId);

    const childOfServer = (name: string) => {
      const [span] = named(spans, name);
      assert.ok(span, `no ${name} span in ${spans.map((s) => s.operationName).join(', ')}`);
      assert.equal(parentOf(span), server.spanID, `${name} is the server span's child`);
      return span;
    };
    childOfServer('admission');
    assert.equal(tag(childOfServer('cache lookup'), 'pvai.cache.hit'), false);
    childOfServer('credits charge');
    assert.equal(tag(childOfServer('context documents'), 'pvai.context.items'), 1);
    assert.equal(tag(childOfServer('context memory'), 'pvai.context.items'), 1);

    const model = childOfServer('chat up');
    assert.equal(tag(model, 'span.kind'), 'client');
    assert.equal(tag(model, 'gen_ai.operation.name'), 'chat');
    assert.equal(tag(model, 'gen_ai.provider.name'), 'openai');
    assert.equal(tag(model, 'gen_ai.request.model'), 'up');
    assert.equal(tag(model, 'gen_ai.response.model'), 'up');
    assert.equal(tag(model, 'gen_ai.request.max_tokens'), 64);
    assert.equal(tag(model, 'gen_ai.request.temperature'), 0.2);
    assert.equal(tag(model, 'pvai.model'), 'PV-TURBO');
    const input = tag(model, 'gen_ai.usage.input_tokens');
    const output = tag(model, 'gen_ai.usage.output_tokens');
    assert.ok(typeof input === 'number' && input > 0, `input tokens: ${input}`);
    assert.ok(typeof output === 'number' && output > 0, `output tokens: ${output}`);
    assert.match(String(tag(model, 'gen_ai.response.finish_reasons')), /stop/);

    // No prompt or answer text in any attribute unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
    const everything = JSON.stringify(spans);
    assert.ok(!everything.includes(PROMPT_SECRET), 'the prompt is not recorded');
    assert.ok(!everything.includes(ANSWER_SECRET), 'the answer is not recorded');
    assert.ok(!everything.includes('Mallaig'), 'the retrieved passage is not recorded');
    assert.ok(!everything.includes(h.apiKey) && !everything.includes(h.apiKey.slice(0, 12)), 'nor the key');

    // The mock upstream received the trace: the model span is the parent of its call.
    const [call] = h.upstream.requests.filter((r) => r.path.endsWith('/chat/completions'));
    assert.equal(call?.headers.traceparent, `00-${traceId}-${model.spanID}-01`);
  });

  it('a Responses call with file_search, memory and an MCP tool: one trace holds them all, the trace on the MCP server', async () => {
    const doc = await h.server.request('POST', '/z1/rag/documents', {
      apiKey: h.apiKey,
      body: { user_id: 'alice', content: 'The calculator on the ferry to Skye adds small numbers.' },
    });
    assert.equal(doc.status, 201, doc.text);
    h.upstream.script(
      { kind: 'tool-call', name: 'add', id: 'call_add', argumentChunks: ['{"a":2,', '"b":3}'] },
      { kind: 'answer', text: 'Two and three make 5.' },
    );
    mcp.headers.length = 0;
    const { traceId, traceparent } = newTraceparent();
    const res = await h.server.request('POST', '/z1/responses', {
      apiKey: h.apiKey,
      headers: { traceparent },
      body: {
        model: 'PV-TURBO',
        user_id: 'alice',
        skip_cache: true,
        input: `What is 2 + 3? ${PROMPT_SECRET}`,
        tools: [
          { type: 'file_search' },
          { type: 'mcp', server_label: 'calc', server_url: mcp.url, require_approval: 'never' },
        ],
      },
    });
    assert.equal(res.status, 200, res.text);

    const spans = await traceOf(traceId, 'createResponse');
    const [server] = named(spans, 'createResponse');
    assert.ok(server);
    const [tool] = named(spans, 'execute_tool add');
    assert.ok(tool, `no tool span in ${spans.map((s) => s.operationName).join(', ')}`);
    assert.equal(parentOf(tool), server.spanID);
    assert.equal(tag(tool, 'gen_ai.operation.name'), 'execute_tool');
    assert.equal(tag(tool, 'gen_ai.tool.name'), 'add');
    assert.equal(tag(tool, 'gen_ai.tool.call.id'), 'call_add');
    assert.equal(tag(tool, 'gen_ai.tool.call.arguments'), undefined, 'arguments are content: not recorded');
    const models = named(spans, 'chat up');
    assert.equal(models.length, 2, 'a model call before the tool and one after');
    assert.ok(named(spans, 'context memory').length >= 1);
    // The RAG of file_search over the end user's documents, in the same trace as the memory and the tool.
    const documents = named(spans, 'context documents');
    assert.ok(documents.length >= 1, `no documents context in ${spans.map((s) => s.operationName).join(', ')}`);
    assert.ok(named(spans, 'retrieval search').some((r) => documents.some((d) => parentOf(r) === d.spanID)));
    assert.ok(!JSON.stringify(spans).includes(PROMPT_SECRET));
    // The tool's server got the trace, with the tool call's span as parent of its call.
    assert.ok(
      mcp.headers.some((headers) => headers.traceparent === `00-${traceId}-${tool.spanID}-01`),
      'the MCP server received the tool span as parent',
    );
    for (const body of chatRequests(h.upstream)) assert.ok(body.messages.length > 0);
  });

  it('a 5xx names its trace in details.trace_id, and its server span is an error', async () => {
    h.upstream.script({ kind: 'status', status: 500 });
    const { traceId, traceparent } = newTraceparent();
    const res = await h.server.request<{ code: string; details: { trace_id?: string } }>(
      'POST',
      '/z1/chat/completions',
      {
        apiKey: h.apiKey,
        headers: { traceparent },
        body: {
          model: 'PV-TURBO',
          user_id: 'bob',
          skip_cache: true,
          messages: [{ role: 'user', content: 'Hello?' }],
        },
      },
    );
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.code, 'UPSTREAM_ERROR');
    assert.equal(res.body.details.trace_id, traceId);

    const spans = await traceOf(traceId, 'createChatCompletion');
    const [server] = named(spans, 'createChatCompletion');
    assert.equal(tag(server, 'http.response.status_code'), 502);
    assert.equal(tag(server, 'error.type'), 'UPSTREAM_ERROR');
    assert.equal(tag(server, 'otel.status_code'), 'ERROR');
    const [model] = named(spans, 'chat up');
    assert.equal(tag(model, 'otel.status_code'), 'ERROR');
    assert.equal(tag(model, 'error.type'), 'upstream');
  });

  it('a refused request (4xx) names no trace in its body, and a request without traceparent starts a trace', async () => {
    const res = await h.server.request<{ code: string; details: Record<string, unknown> | null }>(
      'POST',
      '/z1/chat/completions',
      { apiKey: h.apiKey, body: { model: 'PV-NOPE', messages: [{ role: 'user', content: 'Hi' }] } },
    );
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.details?.trace_id, undefined);
    const services = await eventually(
      () => collector.services(),
      (names) => names.includes('pvai'),
      15_000,
    );
    assert.ok(services.includes('pvai'), `services: ${services.join(', ')}`);
  });
});
