import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type DocumentBody, EMBEDDING_MODEL, filler } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream, systemPrompt } from '../support/mock-openai-upstream.js';
import { type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  type ChatBody,
  DOC_FACT,
  type ErasureBody,
  type ExportBody,
  MEMORY,
  qdrantCount,
  seedUsers,
} from './user-data-seed.js';

/**
 * An end user's data in one call each, over real HTTP, on SQLite and PostgreSQL (+ a real Qdrant): the export
 * holds exactly the user's data, and the erase leaves no trace of it in the API, the stores, the indexes, the
 * chat's context and the response cache, keeps the usage rows without the user, and touches no one else.
 */
for (const rag of ragBackends()) {
  describe(`an end user's data: export and erase (${rag.label})`, () => {
    let retrieval: Retrieval;
    let upstream: MockUpstream;
    let server: TestServer;
    let accountId: string;
    let apiKey: string;
    let otherAccountId: string;
    let otherKey: string;
    let doc: DocumentBody;
    let deletedMemoryId: string;
    let responseId: string;
    let usageBefore: { n: number; credits: number; prompt: number; last: number };

    before(async () => {
      retrieval = await startRetrieval(rag);
      upstream = await startMockUpstream({ defaultText: 'Noted [1].' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      server = await startTestServer(rag.backend, {
        // Memories come from the API here, so that what each step holds does not depend on the extractor.
        memoryExtractor: { name: 'none', extract: async () => ({ facts: [], forget: [] }) },
        config: {
          ...retrieval.config,
          embeddingModel: EMBEDDING_MODEL,
          tiers: { free: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target] },
        },
      });
      ({ accountId, apiKey, otherAccountId, otherKey, doc, deletedMemoryId, responseId } = await seedUsers(server));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
      await retrieval?.stop();
    });
    beforeEach(() => upstream.reset());

    const exportOf = async (key: string, userId: string) => {
      const res = await server.request<ExportBody>('GET', `/z1/users/${encodeURIComponent(userId)}/export`, {
        apiKey: key,
      });
      assert.equal(res.status, 200, res.text);
      return res;
    };
    const erase = async (key: string, userId: string) => {
      const res = await server.request<ErasureBody>('DELETE', `/z1/users/${encodeURIComponent(userId)}`, {
        apiKey: key,
      });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const ask = (extra: Record<string, unknown> = {}) =>
      server.request<ChatBody>('POST', '/z1/chat/completions', {
        apiKey,
        body: {
          model: 'PV-TURBO',
          user_id: 'ada',
          use_rag: true,
          messages: [{ role: 'user', content: 'What is the harbour gate code, and what do I play on Sundays?' }],
          ...extra,
        },
      });
    const rowsOf = (table: string, account: string, userId = 'ada') =>
      server.running.runtime.db.query(`SELECT 1 FROM ${table} WHERE account_id = $1 AND user_id = $2`, [
        account,
        userId,
      ]);

    it('exports exactly the user: memories with their history (a deleted one too), documents with text, usage rows', async () => {
      await server.running.runtime.usage.flush();
      const res = await exportOf(apiKey, 'ada');
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('transfer-encoding'), 'chunked', 'streamed, not built whole');
      const body = res.body;
      assert.equal(body.object, 'user.export');
      assert.equal(body.user_id, 'ada');

      const current = body.memories.filter((m) => m.memory).map((m) => m.memory?.content);
      assert.deepEqual(current.sort(), ['The user lives in Paris.', MEMORY].sort());
      assert.ok(body.memories.every((m) => !m.memory || (m.memory.user_id === 'ada' && m.memory.id === m.memory_id)));
      const paris = body.memories.find((m) => m.memory?.content === 'The user lives in Paris.');
      assert.deepEqual(
        paris?.history.map((h) => [h.event, h.content, h.previous_content]),
        [
          ['add', 'The user lives in Lyon.', null],
          ['update', 'The user lives in Paris.', 'The user lives in Lyon.'],
        ],
      );
      const deleted = body.memories.find((m) => m.memory_id === deletedMemoryId);
      assert.ok(deleted, 'a deleted memory is exported by its history');
      assert.equal(deleted.memory, undefined);
      assert.deepEqual(
        deleted.history.map((h) => h.event),
        ['add', 'delete'],
      );

      assert.deepEqual(
        body.documents.map((d) => [d.id, d.user_id, d.title, d.status]),
        [[doc.id, 'ada', 'Workshop notes', 'ready']],
      );
      assert.ok(body.documents[0]?.text.includes(DOC_FACT));

      const stored = await server.usageRows<{ request_id: string }>(
        'SELECT request_id FROM usage_records WHERE account_id = $1 AND user_id = $2 ORDER BY id',
        [accountId, 'ada'],
      );
      assert.deepEqual(
        body.usage.map((u) => u.request_id),
        stored.map((r) => r.request_id),
      );
      const endpoints = new Set(body.usage.map((u) => u.endpoint));
      for (const e of ['createMemory', 'updateMemory', 'deleteMemory', 'createDocument', 'getDocument']) {
        assert.ok(endpoints.has(e), `${e} in ${[...endpoints].join(', ')}`);
      }
      assert.ok(endpoints.has('createChatCompletion'), 'a chat naming her by `user`');
      assert.ok(endpoints.has('createEmbedding'), 'embeddings naming her by `user`');
      assert.ok(!endpoints.has('exportUserData'), "the export's own request does not name her");
      assert.deepEqual(
        body.request_logs.map((l) => l.request_id).sort(),
        stored.map((r) => r.request_id).sort(),
        'a request log for each of her requests',
      );
      assert.ok(body.request_logs.every((l) => l.user_id === 'ada' && l.content === null));
      assert.deepEqual(
        body.idempotent_requests.map((r) => [r.key, r.endpoint, r.status]),
        [['ada-hello', 'createChatCompletion', 200]],
      );

      assert.deepEqual(
        body.responses.map((r) => [r.response.id, r.response.user_id, r.input_items.length]),
        [[responseId, 'ada', 1]],
      );

      const text = res.text;
      for (const other of ['bees', 'sails', 'bob']) assert.ok(!text.includes(other), `nothing of ${other}`);
    });

    it('keys cached answers by her data, and after the erase never serves them again', async () => {
      const first = await ask();
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-cache'), 'MISS');
      assert.match(systemPrompt(upstream), /7431-walrus/);
      assert.match(systemPrompt(upstream), /cello/);
      assert.equal((await ask()).headers.get('x-cache'), 'HIT');
      // Documents only: the key then holds the document version alone.
      assert.equal((await ask({ use_memory: false })).headers.get('x-cache'), 'MISS');
      assert.equal((await ask({ use_memory: false })).headers.get('x-cache'), 'HIT');
      await server.running.runtime.memory.settled();
      const rows = await server.usageRows<{ n: number; credits: number; prompt: number; last: number }>(
        `SELECT count(*) AS n, coalesce(sum(credits), 0) AS credits, coalesce(sum(prompt_tokens), 0) AS prompt,
                max(id) AS last FROM usage_records WHERE account_id = $1`,
        [accountId],
      );
      usageBefore = {
        n: Number(rows[0]?.n),
        credits: Number(rows[0]?.credits),
        prompt: Number(rows[0]?.prompt),
        last: Number(rows[0]?.last),
      };
    });

    it('erases her, idempotently: counts by kind, nothing left in the API, the stores or the indexes; the next export is empty', async () => {
      const named = await server.usageRows('SELECT 1 FROM usage_records WHERE account_id = $1 AND user_id = $2', [
        accountId,
        'ada',
      ]);
      const erased = await erase(apiKey, 'ada');
      assert.deepEqual(erased, {
        object: 'user.erased',
        user_id: 'ada',
        erased: {
          memories: 2,
          documents: 1,
          responses: 1,
          conversations: 0,
          files: 0,
          vector_stores: 0,
          usage: named.length,
          // Every request that named her left a request log too; the erase deletes them.
          request_logs: named.length,
          idempotent_requests: 1,
        },
      });
      await server.running.runtime.usage.flush();
      assert.deepEqual(await rowsOf('usage_records', accountId), [], 'no usage row names her');
      assert.deepEqual(await rowsOf('request_logs', accountId), [], 'no request log names her');
      // Idempotent: asked again (before any request names her anew), it succeeds and erases nothing.
      assert.deepEqual((await erase(apiKey, 'ada')).erased, {
        memories: 0,
        documents: 0,
        responses: 0,
        conversations: 0,
        files: 0,
        vector_stores: 0,
        usage: 0,
        request_logs: 0,
        idempotent_requests: 0,
      });

      const empty = (await exportOf(apiKey, 'ada')).body;
      assert.deepEqual([empty.memories, empty.documents, empty.usage, empty.responses], [[], [], [], []]);
      assert.equal((await server.request('GET', `/z1/responses/${responseId}`, { apiKey })).status, 404);
      const list = await server.request<{ data: unknown[] }>('GET', '/z1/memory?user_id=ada', { apiKey });
      assert.deepEqual(list.body.data, []);
      const docs = await server.request<{ data: unknown[] }>('GET', '/z1/rag/documents?user_id=ada', { apiKey });
      assert.deepEqual(docs.body.data, []);
      assert.equal((await server.request('GET', `/z1/rag/documents/${doc.id}?user_id=ada`, { apiKey })).status, 404);
      for (const path of ['/z1/rag/search', '/z1/memory/search']) {
        const found = await server.request<{ data: unknown[] }>('POST', path, {
          apiKey,
          body: { user_id: 'ada', query: 'harbour gate code walrus cello Sunday Paris' },
        });
        assert.deepEqual(found.body.data, [], path);
      }

      const tables = [
        'memories',
        'memory_history',
        'memory_user_versions',
        'rag_documents',
        'rag_chunks',
        'rag_user_versions',
      ];
      for (const table of tables) assert.deepEqual(await rowsOf(table, accountId), [], table);
      if (rag.qdrant && retrieval.url) {
        assert.equal(await qdrantCount(retrieval.url, accountId, 'ada'), 0, 'document points');
        assert.equal(await qdrantCount(retrieval.url, `${accountId}#memory`, 'ada'), 0, 'memory points');
        assert.ok((await qdrantCount(retrieval.url, otherAccountId, 'ada')) > 0, "the other account's ada keeps hers");
      } else {
        for (const account of [accountId, `${accountId}#memory`]) {
          for (const table of ['rag_index_chunks', 'rag_index_tenants']) {
            assert.deepEqual(await rowsOf(table, account), [], `${table} of ${account}`);
          }
        }
      }
    });

    it('keeps her usage rows, without her: counts, tokens and credits unchanged', async () => {
      const rows = await server.usageRows<{ n: number; credits: number; prompt: number; named: number }>(
        `SELECT count(*) AS n, coalesce(sum(credits), 0) AS credits, coalesce(sum(prompt_tokens), 0) AS prompt,
                count(user_id) AS named
           FROM usage_records WHERE account_id = $1 AND id <= $2`,
        [accountId, usageBefore.last],
      );
      assert.equal(Number(rows[0]?.n), usageBefore.n);
      assert.equal(Number(rows[0]?.credits), usageBefore.credits);
      assert.equal(Number(rows[0]?.prompt), usageBefore.prompt);
      const bob = await server.usageRows('SELECT 1 FROM usage_records WHERE account_id = $1 AND user_id = $2', [
        accountId,
        'bob',
      ]);
      assert.ok(bob.length > 0, "bob's rows still name bob");
      const erasures = await server.usageRows<{ user_id: string | null }>(
        "SELECT user_id FROM usage_records WHERE account_id = $1 AND endpoint = 'eraseUserData'",
        [accountId],
      );
      assert.ok(erasures.length > 0 && erasures.every((r) => r.user_id === null), "the erase's own row names no one");
    });

    it('gives a later chat none of her data, and serves none of the answers cached from it', async () => {
      const res = await ask();
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-cache'), 'MISS', 'the answer cached from her data is not served');
      assert.equal(upstream.requests.length, 1, 'the upstream answered again');
      const prompt = systemPrompt(upstream);
      assert.doesNotMatch(prompt, /walrus|cello|Paris/);
      assert.equal(res.body.memory_context.items_retrieved, 0);
      assert.equal(res.body.citations?.length ?? 0, 0);
    });

    it('never repeats a document version an answer was cached with, even for the same document again', async () => {
      const again = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'ada', title: 'Workshop notes', content: `${filler(6)}\n\n${DOC_FACT}\n\n${filler(6, 40)}` },
      });
      await eventually(
        () => server.request<DocumentBody>('GET', `/z1/rag/documents/${again.body.id}?user_id=ada`, { apiKey }),
        (r) => r.body.status === 'ready',
        20_000,
      );
      const res = await ask({ use_memory: false });
      assert.equal(res.headers.get('x-cache'), 'MISS');
      const cited = new Set(res.body.citations?.map((c) => c.document_id));
      assert.deepEqual([...cited], [again.body.id], 'cites the new document, never the erased one');
    });

    it("leaves the account's other users and another account's user of the same id untouched", async () => {
      const bob = (await exportOf(apiKey, 'bob')).body;
      assert.deepEqual(
        bob.memories.map((m) => m.memory?.content),
        ['The user keeps bees.'],
      );
      assert.equal(bob.documents.length, 1);
      const otherAda = (await exportOf(otherKey, 'ada')).body;
      assert.deepEqual(
        otherAda.memories.map((m) => m.memory?.content),
        ['The user sails on weekends.'],
      );
      assert.equal(otherAda.documents.length, 1);
      assert.ok(otherAda.documents[0]?.text.includes('bees of ada'));
      // The other account erasing "bob" erases nobody: its key's account has no bob.
      assert.deepEqual((await erase(otherKey, 'bob')).erased, {
        memories: 0,
        documents: 0,
        responses: 0,
        conversations: 0,
        files: 0,
        vector_stores: 0,
        usage: 0,
        request_logs: 0,
        idempotent_requests: 0,
      });
      assert.equal((await exportOf(apiKey, 'bob')).body.memories.length, 1);
      for (const table of ['memories', 'rag_documents']) {
        assert.equal((await rowsOf(table, accountId, 'bob')).length, 1, table);
        assert.equal((await rowsOf(table, otherAccountId, 'ada')).length, 1, table);
      }
    });

    it('takes any user id the API takes, percent-encoded in the path, and refuses an invalid one', async () => {
      const odd = 'ünïcode/user ü@example.com';
      await server.request('POST', '/z1/memory', { apiKey, body: { user_id: odd, content: 'The user likes tea.' } });
      const exported = (await exportOf(apiKey, odd)).body;
      assert.equal(exported.user_id, odd);
      assert.equal(exported.memories[0]?.memory?.content, 'The user likes tea.');
      assert.equal((await erase(apiKey, odd)).erased.memories, 1);
      const tooLong = await server.request<{ code: string }>('GET', `/z1/users/${'u'.repeat(257)}/export`, { apiKey });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.code, 'INVALID_PARAMETER');
      const control = await server.request<{ code: string }>('DELETE', '/z1/users/a%01b', { apiKey });
      assert.equal(control.status, 400);
      assert.equal((await server.request('DELETE', '/z1/users/ada')).status, 401);
    });
  });
}
