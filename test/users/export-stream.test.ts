import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface ExportBody {
  memories: Array<{ memory_id: string; memory?: { content: string }; history: Array<{ event: string }> }>;
  usage: Array<{ request_id: string; created_at: string }>;
}

/**
 * The export of a user with more than a page of everything, over real HTTP: streamed (chunked), every page
 * there in order, and a failure half-way through cuts the response instead of ending it as if complete.
 */
for (const backend of backends()) {
  describe(`a large end user's export, streamed (${backend})`, () => {
    let server: TestServer;
    let accountId: string;
    let apiKey: string;

    before(async () => {
      server = await startTestServer(backend);
      ({ accountId, apiKey } = await server.createAccount('free', 10));
    });
    after(() => server?.close());

    /** Usage rows naming the user, written as the service writes them (several pages of the export's reads). */
    async function usageRows(userId: string, count: number, createdAt: (i: number) => number): Promise<void> {
      const db = server.running.runtime.db;
      for (let i = 0; i < count; i++) {
        await db.query(
          `INSERT INTO usage_records (account_id, key_id, request_id, endpoint, model, status, prompt_tokens,
             completion_tokens, credits, latency_ms, cached, created_at, user_id)
           VALUES ($1, NULL, $2, 'createChatCompletion', 'PV-TURBO', 200, 10, 5, 1, 100, $3, $4, $5)`,
          [accountId, `req_${userId}_${String(i).padStart(5, '0')}`, false, createdAt(i), userId],
        );
      }
    }

    it('holds every page of memories and usage rows, in order, sent in chunks', async () => {
      const db = server.running.runtime.db;
      const t0 = Date.UTC(2026, 0, 1);
      for (let i = 0; i < 250; i++) {
        const id = `mem_${String(i).padStart(4, '0')}`;
        // Every third one deleted: its history stays (add, delete), the memory is gone.
        const deleted = i % 3 === 0;
        if (!deleted) {
          await db.query(
            `INSERT INTO memories (id, account_id, user_id, content, metadata, source, slot, created_at, updated_at)
             VALUES ($1, $2, 'big', $3, '{}', 'api', NULL, $4, $4)`,
            [id, accountId, `Fact number ${i}.`, t0 + i],
          );
        }
        for (const event of deleted ? ['add', 'delete'] : ['add']) {
          await db.query(
            `INSERT INTO memory_history (memory_id, account_id, user_id, event, content, previous_content, source, at)
             VALUES ($1, $2, 'big', $3, $4, NULL, 'api', $5)`,
            [id, accountId, event, `Fact number ${i}.`, t0 + i],
          );
        }
      }
      await usageRows('big', 1234, (i) => t0 + i);

      const res = await server.request<ExportBody>('GET', '/z1/users/big/export', { apiKey });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('transfer-encoding'), 'chunked');
      assert.equal(res.headers.get('content-length'), null);
      const { memories, usage } = res.body;
      assert.deepEqual(
        memories.map((m) => m.memory_id),
        Array.from({ length: 250 }, (_, i) => `mem_${String(i).padStart(4, '0')}`),
      );
      assert.equal(memories.filter((m) => m.memory === undefined).length, 84);
      assert.ok(memories.every((m) => (m.memory ? m.history.length === 1 : m.history.at(-1)?.event === 'delete')));
      assert.equal(usage.length, 1234);
      assert.deepEqual(
        usage.map((u) => u.request_id),
        Array.from({ length: 1234 }, (_, i) => `req_big_${String(i).padStart(5, '0')}`),
      );
    });

    it('cuts the response when a later page fails: the client never gets a document that parses', async () => {
      // A row the export cannot write (a time past the last date JavaScript has) after two full pages.
      await usageRows('broken', 1001, (i) => (i === 1000 ? 9e15 : Date.UTC(2026, 0, 1) + i));
      const res = await fetch(`${server.url}/z1/users/broken/export`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      });
      assert.equal(res.status, 200, 'the first page went out with its status');
      await assert.rejects(res.text(), 'the body ends without its last chunk');
      // The server goes on serving.
      assert.equal((await server.request('GET', '/z1/users/big/export', { apiKey })).status, 200);
    });
  });
}
