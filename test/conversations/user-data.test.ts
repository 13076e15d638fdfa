import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ResponsesHarness, startResponses } from '../responses/support.js';
import { backends } from '../support/databases.js';

/**
 * Conversations are part of an end user's data: the export (`GET /z1/users/{id}/export`) holds each of the user's
 * conversations with its items, oldest first, and the erase (`DELETE /z1/users/{id}`) deletes them with their
 * items, touching no other user's nor another account's. `default`, the end user of requests that name none, is
 * one end user like any other.
 */
interface Conversation {
  id: string;
  object: string;
  created_at: number;
  metadata: Record<string, string>;
  user_id: string;
}
interface Item {
  id: string;
  type: string;
}
interface ExportBody {
  user_id: string;
  conversations: Array<{ conversation: Conversation; items: Item[] }>;
}
interface ErasureBody {
  erased: { conversations: number; responses: number };
}

/** More than one page of the export's (20 conversations a page). */
const ALICE_CONVERSATIONS = 23;

for (const backend of backends()) {
  describe(`conversations in an end user's export and erase (${backend})`, () => {
    let h: ResponsesHarness;
    let otherKey: string;
    let alices: Conversation[];
    let bobs: Conversation;
    let defaults: Conversation;
    let foreignAlices: Conversation;

    const create = async (apiKey: string, body: Record<string, unknown>) => {
      const res = await h.server.request<Conversation>('POST', '/z1/conversations', { apiKey, body });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const exportOf = async (userId: string, apiKey = h.apiKey) => {
      const res = await h.server.request<ExportBody>('GET', `/z1/users/${userId}/export`, { apiKey });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const erase = async (userId: string, apiKey = h.apiKey) => {
      const res = await h.server.request<ErasureBody>('DELETE', `/z1/users/${userId}`, { apiKey });
      assert.equal(res.status, 200, res.text);
      return res.body.erased;
    };
    const itemsOf = async (id: string, apiKey = h.apiKey) => {
      const res = await h.server.request<{ data: Item[] }>('GET', `/z1/conversations/${id}/items?order=asc`, {
        apiKey,
      });
      assert.equal(res.status, 200, res.text);
      return res.body.data;
    };
    const status = async (id: string, apiKey = h.apiKey) =>
      (await h.server.request('GET', `/z1/conversations/${id}`, { apiKey })).status;

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Noted.' });
      ({ apiKey: otherKey } = await h.server.createAccount('business', 1000));
      alices = [];
      for (let i = 0; i < ALICE_CONVERSATIONS; i++) {
        alices.push(
          await create(h.apiKey, {
            user_id: 'alice',
            metadata: { n: String(i) },
            items: [{ role: 'user', content: `Conversation ${i}` }],
          }),
        );
      }
      // One of them continued by a response: its items are the input and the response's output too.
      const first = alices[0];
      assert.ok(first);
      const response = await h.create({ model: 'PV-TURBO', user_id: 'alice', conversation: first.id, input: 'Hi' });
      assert.equal(response.status, 200, response.text);
      bobs = await create(h.apiKey, { user: 'bob', items: [{ role: 'user', content: 'Bob here' }] });
      defaults = await create(h.apiKey, { items: [{ role: 'user', content: 'Nobody named' }] });
      foreignAlices = await create(otherKey, { user_id: 'alice' });
    });
    after(() => h?.close());

    it("the export holds each of the user's conversations, as GET answers it, with its items oldest first", async () => {
      const body = await exportOf('alice');
      const byId = [...alices].sort((a, b) => (a.id < b.id ? -1 : 1));
      assert.deepEqual(
        body.conversations.map((c) => c.conversation),
        byId,
        'every one of them across pages, in id order, nobody else’s',
      );
      for (const { conversation, items } of body.conversations) {
        assert.deepEqual(items, await itemsOf(conversation.id), conversation.id);
      }
      const continued = body.conversations.find((c) => c.conversation.id === alices[0]?.id);
      assert.deepEqual(
        continued?.items.map((i) => i.type),
        ['message', 'message', 'message'],
        'its first item, the response input and output',
      );
    });

    it('`default` is one end user like any other: its export holds the conversation made naming nobody', async () => {
      assert.equal(defaults.user_id, 'default');
      const body = await exportOf('default');
      assert.deepEqual(
        body.conversations.map((c) => [c.conversation.id, c.items.length]),
        [[defaults.id, 1]],
      );
      assert.deepEqual(
        (await exportOf('bob')).conversations.map((c) => c.conversation.id),
        [bobs.id],
      );
    });

    it("the erase deletes the user's conversations and their items, nobody else's; a second erase finds none", async () => {
      const erased = await erase('alice');
      assert.equal(erased.conversations, ALICE_CONVERSATIONS);
      assert.equal(erased.responses, 1);
      for (const c of alices) assert.equal(await status(c.id), 404, c.id);
      assert.deepEqual((await exportOf('alice')).conversations, []);
      const gone = await h.create({ model: 'PV-TURBO', user_id: 'alice', conversation: alices[0]?.id, input: 'x' });
      assert.equal(gone.status, 404, gone.text);
      // Their items are gone too (a store whose items outlived their conversation would leak them here).
      const left = await h.server.running.runtime.db.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM conversation_items WHERE account_id = $1 AND user_id = $2',
        [h.accountId, 'alice'],
      );
      assert.equal(Number(left[0]?.n), 0);

      assert.equal(await status(bobs.id), 200);
      assert.equal(await status(defaults.id), 200);
      assert.equal(await status(foreignAlices.id, otherKey), 200, "another account's alice is another end user");
      assert.equal((await erase('alice')).conversations, 0);

      assert.equal((await erase('default')).conversations, 1);
      assert.equal(await status(defaults.id), 404);
      assert.equal(await status(bobs.id), 200);
    });
  });
}
