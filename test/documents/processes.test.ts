import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { type DocumentBody, EMBEDDING_MODEL, filler, type MatchBody } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { pvai, type ServerProcess, startServerProcess } from '../support/processes.js';
import { qdrantPoints, type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { TEST_MODEL } from '../support/server.js';

async function call<T>(server: ServerProcess, apiKey: string, method: string, path: string, body?: unknown) {
  const res = await fetch(server.url + path, {
    method,
    headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as T };
}

for (const rag of ragBackends()) {
  describe(`ingestion survives a crash (${rag.label})`, () => {
    let database: TestDatabase;
    let retrieval: Retrieval;
    let upstream: MockUpstream;
    let env: Record<string, string>;
    let apiKey: string;
    let server: ServerProcess | undefined;

    before(async () => {
      database = await createTestDatabase(rag.backend);
      retrieval = await startRetrieval(rag);
      // Embeddings from a real OpenAI-wire server that answers each batch of 8 chunks after 1 s: the big
      // document (~52 chunks) takes at least 7 s to embed on any machine, and the kill lands ~2 s after its
      // upload, while its job runs. (With MiniLM an idle machine embedded it before the test could look.)
      upstream = await startMockUpstream();
      upstream.scriptModel('embed-slow', { kind: 'slow', chunks: [], delayMs: 1000 });
      const configFile = join(database.dataDir, 'pvai.config.json');
      writeFileSync(
        configFile,
        JSON.stringify({ embeddingUpstream: { baseUrl: upstream.url, model: 'embed-slow', batchSize: 8 } }),
      );
      env = {
        ...retrieval.env,
        PVAI_DATA_DIR: database.dataDir,
        PVAI_LOCAL_MODEL: TEST_MODEL,
        PVAI_CONFIG: configFile,
        // Empty, not absent: the test process's own DATABASE_URL must not reach a SQLite server.
        DATABASE_URL: database.databaseUrl ?? '',
      };
      const { stdout } = await pvai(
        ['accounts', 'create', '--email', 'crash@example.com', '--tier', 'business', '--json'],
        env,
      );
      apiKey = (JSON.parse(stdout) as { api_key: string }).api_key;
    });
    after(async () => {
      await server?.stop();
      await upstream?.close();
      await retrieval?.stop();
      await database?.drop();
    });

    it('loses no acknowledged document to SIGKILL and finishes the job after restart', async () => {
      server = await startServerProcess(env);
      const big = `${filler(260, 3)}\n\nThe harbourmaster's boat is called Gullwing.\n\n${filler(100, 77)}`;
      const first = await call<DocumentBody>(server, apiKey, 'POST', '/z1/rag/documents', {
        user_id: 'u',
        title: 'Harbour',
        content: big,
      });
      assert.equal(first.status, 201);
      assert.equal(first.body.status, 'processing');
      const small = await call<DocumentBody>(server, apiKey, 'POST', '/z1/rag/documents', {
        user_id: 'u',
        content: 'The bakery opens at 05:30.',
      });
      assert.equal(small.status, 201);
      const mid = await call<DocumentBody>(server, apiKey, 'GET', `/z1/rag/documents/${first.body.id}?user_id=u`);
      assert.equal(mid.body.status, 'processing', 'killed while the job runs');

      server.child.kill('SIGKILL');
      await new Promise((r) => server?.child.once('exit', r));
      server = await startServerProcess(env);

      const list = await call<{ data: DocumentBody[] }>(server, apiKey, 'GET', '/z1/rag/documents?user_id=u');
      assert.deepEqual(list.body.data.map((d) => d.id).sort(), [first.body.id, small.body.id].sort());
      // PostgreSQL: another replica may hold the job, so it waits out the dead worker's 30 s lease.
      // Polled twice a second: the account's rate limit counts these requests too.
      let done = mid.body;
      for (const deadline = Date.now() + 120_000; done.status !== 'ready' && Date.now() < deadline; ) {
        await sleep(500);
        done = (await call<DocumentBody>(server, apiKey, 'GET', `/z1/rag/documents/${first.body.id}?user_id=u`)).body;
      }
      assert.equal(done.status, 'ready');
      assert.equal(done.progress, 1);
      const hits = await call<{ data: MatchBody[] }>(server, apiKey, 'POST', '/z1/rag/search', {
        user_id: 'u',
        query: 'what is the name of the harbourmaster boat',
      });
      assert.ok(hits.body.data[0]?.snippet.includes('Gullwing'));
      if (retrieval.url) {
        // The resumed job re-put what the killed one had indexed: the same points, none twice, none stale.
        const after = await call<{ data: DocumentBody[] }>(server, apiKey, 'GET', '/z1/rag/documents?user_id=u');
        const chunks = after.body.data.reduce((sum, d) => sum + d.chunk_count, 0);
        assert.equal(await qdrantPoints(retrieval.url, 'u'), chunks);
      }
    });
  });
}

for (const rag of ragBackends().filter((r) => r.backend === 'postgres')) {
  describe(`two server processes on one PostgreSQL share documents (${rag.label})`, () => {
    let database: TestDatabase;
    let retrieval: Retrieval;
    let servers: ServerProcess[] = [];
    let apiKey: string;

    before(async () => {
      database = await createTestDatabase('postgres');
      retrieval = await startRetrieval(rag);
      const env = {
        DATABASE_URL: database.databaseUrl ?? '',
        PVAI_DATA_DIR: database.dataDir,
        PVAI_LOCAL_MODEL: TEST_MODEL,
        PVAI_EMBEDDING_MODEL: EMBEDDING_MODEL,
        ...retrieval.env,
      };
      const { stdout } = await pvai(
        ['accounts', 'create', '--email', 'r@example.com', '--tier', 'business', '--json'],
        env,
      );
      apiKey = (JSON.parse(stdout) as { api_key: string }).api_key;
      // Started together: with Qdrant both create the collection at once, as replicas do.
      const started = await Promise.allSettled([startServerProcess(env), startServerProcess(env)]);
      servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      // One that failed to start must not leave the other running (it would keep the test process alive).
      for (const s of started) if (s.status === 'rejected') throw s.reason;
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await retrieval?.stop();
      await database?.drop();
    });

    it('finds through one what was uploaded through the other, and both see the deletion', async () => {
      const [a, b] = servers as [ServerProcess, ServerProcess];
      const doc = await call<DocumentBody>(a, apiKey, 'POST', '/z1/rag/documents', {
        user_id: 'u',
        content: `${filler(6)}\n\nThe observatory dome opens at 21:00 on clear nights.\n\n${filler(6, 30)}`,
      });
      assert.equal(doc.status, 201);
      assert.equal(doc.body.status, 'ready');
      if (retrieval.url) assert.equal(await qdrantPoints(retrieval.url, 'u'), doc.body.chunk_count);
      // By its words, and by meaning with none of them.
      for (const text of ['observatory dome', 'when can I look at the stars through the telescope?']) {
        const hits = await call<{ data: MatchBody[] }>(b, apiKey, 'POST', '/z1/rag/search', {
          user_id: 'u',
          query: text,
        });
        assert.ok(hits.body.data[0]?.snippet.includes('21:00'), `${text}: ${hits.body.data[0]?.snippet}`);
        assert.equal(hits.body.data[0]?.document_id, doc.body.id);
      }
      const other = await call<{ data: MatchBody[] }>(b, apiKey, 'POST', '/z1/rag/search', {
        user_id: 'v',
        query: 'observatory dome',
      });
      assert.deepEqual(other.body.data, [], 'another user of the account sees nothing');
      const query = { user_id: 'u', query: 'observatory dome' };
      assert.equal((await call(b, apiKey, 'DELETE', `/z1/rag/documents/${doc.body.id}?user_id=u`)).status, 200);
      for (const server of [a, b]) {
        assert.deepEqual(
          (await call<{ data: MatchBody[] }>(server, apiKey, 'POST', '/z1/rag/search', query)).body.data,
          [],
        );
        assert.equal((await call(server, apiKey, 'GET', `/z1/rag/documents/${doc.body.id}?user_id=u`)).status, 404);
      }
      if (retrieval.url) assert.equal(await qdrantPoints(retrieval.url, 'u'), 0, 'the points are gone from Qdrant');
    });
  });
}
