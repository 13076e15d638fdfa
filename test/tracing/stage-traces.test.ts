import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type ResponsesHarness, startResponses } from '../responses/support.js';
import { type DocumentBody, EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import {
  type Collector,
  collectorAvailable,
  type ReceivedSpan,
  startCollector,
  tag,
} from '../support/otel-collector.js';
import { type QdrantServer, qdrantAvailable, startQdrant } from '../support/qdrant.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { responsesSocketUrl, TestSocket } from '../support/websocket.js';

const SECRET = 'pelican-sextant';

const newTrace = () => {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
};
const parentOf = (span: ReceivedSpan | undefined) => span?.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
const names = (spans: ReceivedSpan[]) => spans.map((s) => s.operationName).join(', ');
const one = (spans: ReceivedSpan[], name: string) => {
  const span = spans.find((s) => s.operationName === name);
  assert.ok(span, `no ${name} span in ${names(spans)}`);
  return span;
};
const embeddingSpans = (spans: ReceivedSpan[]) => spans.filter((s) => tag(s, 'gen_ai.operation.name') === 'embeddings');

/** Starts tracing to `collector` for the pvai started next (the SDK reads the variables when it starts). */
function traceTo(collector: Collector) {
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.otlpUrl;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
}
function stopTracing() {
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_BSP_SCHEDULE_DELAY;
}

/** A RAG chat for `user` with the given traceparent; its answer must be a 200. */
async function ragChat(h: ResponsesHarness, user: string, traceparent: string) {
  const res = await h.server.request('POST', '/z1/chat/completions', {
    apiKey: h.apiKey,
    headers: { traceparent },
    body: {
      model: 'PV-TURBO',
      user_id: user,
      use_rag: true,
      skip_cache: true,
      messages: [{ role: 'user', content: `When does the ferry to Skye leave? ${SECRET}` }],
    },
  });
  assert.equal(res.status, 200, res.text);
}

/** A document for `user`, waited for until it is ready (chunked, embedded, indexed). */
async function readyDocument(h: ResponsesHarness, user: string): Promise<string> {
  const doc = await h.server.request<DocumentBody>('POST', '/z1/rag/documents', {
    apiKey: h.apiKey,
    body: { user_id: user, content: 'The ferry to Skye leaves from Mallaig pier every morning at seven.' },
  });
  assert.equal(doc.status, 201, doc.text);
  const ready = await eventually(
    async () =>
      (
        await h.server.request<DocumentBody>('GET', `/z1/rag/documents/${doc.body.id}?user_id=${user}`, {
          apiKey: h.apiKey,
        })
      ).body.status,
    (status) => status !== 'processing',
    20_000,
  );
  assert.equal(ready, 'ready');
  return doc.body.id;
}

/**
 * The spans of the stages the first tracing suite does not cover: retrieval and embeddings under a RAG chat's context
 * span, `POST /z1/embeddings`, the sandbox's run, and the background ingestion jobs' own traces; against a real
 * OpenTelemetry Collector, with the real embedding model. SQLite only (tracing does not depend on the database).
 */
describe('OpenTelemetry traces of retrieval, embeddings, the sandbox and jobs (sqlite, OpenTelemetry Collector)', {
  skip: !collectorAvailable() && 'no OpenTelemetry Collector: set PVAI_OTELCOL_BIN',
}, () => {
  let collector: Collector;
  let h: ResponsesHarness;
  let documentId: string;
  const traceOf = (traceId: string, last: string) =>
    eventually(
      () => collector.spans(traceId),
      (found) => found.some((s) => s.operationName === last),
      15_000,
    );

  before(async () => {
    collector = await startCollector();
    traceTo(collector);
    h = await startResponses('sqlite', { config: { embeddingModel: EMBEDDING_MODEL } });
    documentId = await readyDocument(h, 'carol');
  });
  after(async () => {
    await h?.close();
    await collector?.stop();
    stopTracing();
  });

  it('a RAG chat: the index query and the query embedding are children of the documents context span', async () => {
    const { traceId, traceparent } = newTrace();
    await ragChat(h, 'carol', traceparent);
    const spans = await traceOf(traceId, 'createChatCompletion');
    const context = one(spans, 'context documents');
    const search = spans.find((s) => s.operationName === 'retrieval search' && parentOf(s) === context.spanID);
    assert.ok(search, `no retrieval search under the documents context in ${names(spans)}`);
    assert.equal(tag(search, 'pvai.retrieval.index'), 'sqlite');
    assert.equal(tag(search, 'db.system'), undefined, 'the embedded index is no database of its own');
    assert.ok(Number(tag(search, 'pvai.retrieval.top_k')) > 0);
    assert.equal(tag(search, 'pvai.retrieval.hits'), 1);
    assert.equal(tag(search, 'pvai.retrieval.dense'), true);
    const embedding = embeddingSpans(spans).find((s) => parentOf(s) === context.spanID);
    assert.ok(embedding, `no embeddings span under the documents context in ${names(spans)}`);
    assert.equal(embedding.operationName, 'embeddings all-MiniLM-L6-v2.Q8_0.gguf');
    assert.equal(tag(embedding, 'span.kind'), 'client');
    assert.equal(tag(embedding, 'gen_ai.provider.name'), 'llama_cpp');
    assert.ok(Number(tag(embedding, 'gen_ai.usage.input_tokens')) > 0);
    assert.ok(!JSON.stringify(spans).includes(SECRET), 'the query text is not recorded');
  });

  it('POST /z1/embeddings: an embeddings span with the tokens the model counted', async () => {
    const { traceId, traceparent } = newTrace();
    const res = await h.server.request('POST', '/z1/embeddings', {
      apiKey: h.apiKey,
      headers: { traceparent },
      body: { model: 'PV-EMBED', input: [`Cats purr. ${SECRET}`, 'Dogs bark.'] },
    });
    assert.equal(res.status, 200, res.text);
    const spans = await traceOf(traceId, 'createEmbedding');
    const server = one(spans, 'createEmbedding');
    const [embedding] = embeddingSpans(spans);
    assert.ok(embedding, `no embeddings span in ${names(spans)}`);
    assert.equal(parentOf(embedding), server.spanID);
    assert.equal(tag(embedding, 'pvai.embeddings.texts'), 2);
    assert.ok(Number(tag(embedding, 'gen_ai.usage.input_tokens')) >= 4);
    assert.ok(!JSON.stringify(spans).includes(SECRET));
  });

  it("an upload's ingestion: traces of its own, chunking with the index write, embedding with the model and the vectors", async () => {
    const chunked = await eventually(
      () => collector.find('ingestion chunk'),
      (traces) => traces.length > 0,
      15_000,
    );
    const chunking = chunked.find((t) => t.some((s) => s.operationName === 'retrieval put_documents'));
    assert.ok(chunking, `no index write under the chunking: ${chunked.map(names).join(' | ')}`);
    const root = one(chunking, 'ingestion chunk');
    assert.equal(parentOf(root), undefined, 'a job is a trace of its own');
    assert.equal(parentOf(one(chunking, 'retrieval put_documents')), root.spanID);
    const embedded = await eventually(
      () => collector.find('ingestion embed'),
      (traces) => traces.some((t) => t.some((s) => tag(s, 'pvai.document_id') === documentId)),
      15_000,
    );
    const embedding = embedded.find((t) => t.some((s) => tag(s, 'pvai.document_id') === documentId)) ?? [];
    const job = one(embedding, 'ingestion embed');
    assert.equal(parentOf(job), undefined);
    assert.equal(parentOf(one(embedding, 'retrieval put_vectors')), job.spanID);
    assert.equal(parentOf(embeddingSpans(embedding)[0]), job.spanID);
    assert.ok(!JSON.stringify(embedding).includes('Mallaig'), 'the chunk text is not recorded');
  });

  it('a WebSocket message: a server span of its own, the model call its child', async () => {
    const socket = await TestSocket.open(responsesSocketUrl(h.server.url), { Authorization: `Bearer ${h.apiKey}` });
    try {
      const events = await socket.turn({ type: 'response.create', model: 'PV-TURBO', store: false, input: SECRET });
      assert.equal(events.at(-1)?.type, 'response.completed', JSON.stringify(events.at(-1)));
    } finally {
      await socket.close();
    }
    const traces = await eventually(
      () => collector.find('createResponse'),
      (found) => found.length > 0,
      15_000,
    );
    const spans = traces[0] ?? [];
    const server = one(spans, 'createResponse');
    assert.equal(tag(server, 'span.kind'), 'server');
    assert.equal(tag(server, 'http.request.method'), 'WEBSOCKET');
    assert.equal(tag(server, 'http.route'), '/z1/responses');
    assert.equal(tag(server, 'http.response.status_code'), 200);
    assert.equal(parentOf(one(spans, 'chat up')), server.spanID);
    assert.ok(!JSON.stringify(spans).includes(SECRET));
  });

  it("a chat turn's memory extraction: a trace of its own", async () => {
    const traces = await eventually(
      () => collector.find('memory extraction'),
      (found) => found.length > 0,
      15_000,
    );
    const job = one(traces[0] ?? [], 'memory extraction');
    assert.equal(parentOf(job), undefined);
    assert.equal(tag(job, 'pvai.job'), 'memory_extraction');
  });

  it('POST /z1/code/execute: a sandbox run span with its outcome, no code', { skip: sandboxHostSkip() }, async () => {
    const { traceId, traceparent } = newTrace();
    const res = await h.server.request('POST', '/z1/code/execute', {
      apiKey: h.apiKey,
      headers: { traceparent },
      body: { user_id: 'carol', code: `print(len("${SECRET}"))` },
    });
    assert.equal(res.status, 200, res.text);
    const spans = await traceOf(traceId, 'executeCode');
    const run = one(spans, 'sandbox run');
    assert.equal(parentOf(run), one(spans, 'executeCode').spanID);
    assert.equal(tag(run, 'pvai.sandbox.language'), 'python');
    assert.equal(tag(run, 'pvai.sandbox.outcome'), 'completed');
    assert.equal(tag(run, 'pvai.sandbox.raised'), false);
    assert.ok(Number(tag(run, 'pvai.sandbox.execution_ms')) >= 0);
    assert.ok(!JSON.stringify(spans).includes(SECRET), 'the code is not recorded');
  });
});

/** A real HTTP proxy in front of Qdrant that records each request's method, path and headers. */
async function recordingProxy(target: string) {
  const seen: Array<{ method: string; path: string; headers: IncomingHttpHeaders }> = [];
  const to = new URL(target);
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    const upstream = httpRequest(
      { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('OpenTelemetry traces with Qdrant (sqlite, OpenTelemetry Collector, Qdrant)', {
  skip:
    (!collectorAvailable() && 'no OpenTelemetry Collector: set PVAI_OTELCOL_BIN') ||
    (!qdrantAvailable() && 'no Qdrant binary'),
}, () => {
  let collector: Collector;
  let qdrant: QdrantServer;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let h: ResponsesHarness;

  before(async () => {
    collector = await startCollector();
    qdrant = await startQdrant();
    proxy = await recordingProxy(qdrant.url);
    traceTo(collector);
    h = await startResponses('sqlite', { config: { embeddingModel: EMBEDDING_MODEL, qdrantUrl: proxy.url } });
    await readyDocument(h, 'dave');
  });
  after(async () => {
    await h?.close();
    await proxy?.close();
    await qdrant?.stop();
    await collector?.stop();
    stopTracing();
  });

  it("a RAG chat's Qdrant query carries the trace, its retrieval span the parent; the span says db.system qdrant", async () => {
    const { traceId, traceparent } = newTrace();
    proxy.seen.length = 0;
    await ragChat(h, 'dave', traceparent);
    const spans = await traceOf();
    async function traceOf() {
      return eventually(
        () => collector.spans(traceId),
        (found) => found.some((s) => s.operationName === 'createChatCompletion'),
        15_000,
      );
    }
    const documents = one(spans, 'context documents');
    const search = spans.find((s) => s.operationName === 'retrieval search' && parentOf(s) === documents.spanID);
    assert.ok(search, `no retrieval search under the documents context in ${names(spans)}`);
    assert.equal(tag(search, 'db.system'), 'qdrant');
    assert.equal(tag(search, 'pvai.retrieval.index'), 'qdrant');
    assert.equal(tag(search, 'span.kind'), 'client');
    assert.equal(tag(search, 'pvai.retrieval.hits'), 1);
    // The chat's queries (documents', memory's) carry its trace, each with its retrieval span as parent; others
    // seen meanwhile are the background jobs' (a memory extraction after the turn), in traces of their own.
    const queries = proxy.seen.filter(
      (r) => r.method === 'POST' && r.path.endsWith('/points/query') && r.headers.traceparent?.includes(traceId),
    );
    const searches = new Set(spans.filter((s) => s.operationName === 'retrieval search').map((s) => s.spanID));
    const parents = queries.map((q) => String(q.headers.traceparent).split('-')[2]);
    assert.ok(parents.includes(search.spanID), `the documents query's traceparent: ${parents.join(', ')}`);
    for (const parent of parents) assert.ok(searches.has(parent ?? ''), `${parent} is no retrieval span`);
  });
});

describe('OpenTelemetry traces with an embeddings upstream (sqlite, OpenTelemetry Collector)', {
  skip: !collectorAvailable() && 'no OpenTelemetry Collector: set PVAI_OTELCOL_BIN',
}, () => {
  let collector: Collector;
  let upstream: MockUpstream;
  let server: TestServer;

  before(async () => {
    collector = await startCollector();
    upstream = await startMockUpstream();
    traceTo(collector);
    server = await startTestServer('sqlite', {
      config: { embeddingUpstream: { baseUrl: upstream.url, model: 'embed-a', contextTokens: 8192 } },
    });
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
    await collector?.stop();
    stopTracing();
  });

  it("POST /z1/embeddings: the upstream's call carries the trace, the embeddings span its parent", async () => {
    const { apiKey } = await server.createAccount('business', 100);
    const { traceId, traceparent } = newTrace();
    const res = await server.request('POST', '/z1/embeddings', {
      apiKey,
      headers: { traceparent },
      body: { model: 'PV-EMBED', input: ['one', 'two'] },
    });
    assert.equal(res.status, 200, res.text);
    const spans = await eventually(
      () => collector.spans(traceId),
      (found) => found.some((s) => s.operationName === 'createEmbedding'),
      15_000,
    );
    const embedding = one(spans, 'embeddings embed-a');
    assert.equal(tag(embedding, 'gen_ai.provider.name'), 'openai');
    assert.equal(tag(embedding, 'gen_ai.request.model'), 'embed-a');
    // The embedder's dimension probe at start ran in no trace; the request's call carries the request's.
    const sent = upstream.requests.filter((r) => r.path.endsWith('/embeddings')).map((r) => r.headers.traceparent);
    assert.ok(
      sent.includes(`00-${traceId}-${embedding.spanID}-01`),
      `sent: ${sent.join(', ')}; span ${embedding.spanID}`,
    );
  });
});
