import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { chatRequests, type ErrorBody, type ResponsesHarness, startResponses } from '../responses/support.js';
import { backends } from '../support/databases.js';

/**
 * A conversation is its account's (read, changed, deleted by it) and one end user's (continued by them alone): another
 * account's id is absent everywhere, another end user of the same account cannot continue it, and a key bound to an
 * end user sees that end user's conversations only. Each refusal is checked beside the same request allowed.
 */
interface Conversation {
  id: string;
  user_id: string;
  metadata: Record<string, string>;
}

for (const backend of backends()) {
  describe(`conversations are isolated by account and end user (${backend})`, () => {
    let h: ResponsesHarness;
    let otherKey: string;
    let bobKey: string;
    let alices: Conversation;
    let aliceItem: string;

    const call = <T = ErrorBody>(method: string, path: string, apiKey: string, body?: unknown) =>
      h.server.request<T>(method, path, { apiKey, ...(body === undefined ? {} : { body }) });

    /** Every operation on a conversation (its path, and the one item's), as the method and path with a body. */
    const everyOperation = (id: string, itemId: string): Array<[string, string, unknown?]> => [
      ['GET', `/z1/conversations/${id}`],
      ['POST', `/z1/conversations/${id}`, { metadata: { taken: 'yes' } }],
      ['GET', `/z1/conversations/${id}/items`],
      ['POST', `/z1/conversations/${id}/items`, { items: [{ role: 'user', content: 'injected' }] }],
      ['GET', `/z1/conversations/${id}/items/${itemId}`],
      ['DELETE', `/z1/conversations/${id}/items/${itemId}`],
      ['DELETE', `/z1/conversations/${id}`],
    ];

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Noted.' });
      ({ apiKey: otherKey } = await h.server.createAccount('business', 1000));
      const key = await h.server.request<{ api_key: string }>('POST', `/admin/accounts/${h.accountId}/keys`, {
        admin: true,
        body: { name: 'bob only', user_id: 'bob' },
      });
      assert.equal(key.status, 201, key.text);
      bobKey = key.body.api_key;
      const created = await call<Conversation>('POST', '/z1/conversations', h.apiKey, {
        user_id: 'alice',
        metadata: { owner: 'alice' },
        items: [{ role: 'user', content: 'My locker code is kiwi-mango.' }],
      });
      assert.equal(created.status, 200, created.text);
      alices = created.body;
      assert.equal(alices.user_id, 'alice');
      const items = await call<{ data: Array<{ id: string }> }>(
        'GET',
        `/z1/conversations/${alices.id}/items`,
        h.apiKey,
      );
      aliceItem = items.body.data[0]?.id ?? '';
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    /** Alice's conversation is as it was made: one item, its metadata. */
    const assertUntouched = async () => {
      const got = await call<Conversation>('GET', `/z1/conversations/${alices.id}`, h.apiKey);
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body.metadata, { owner: 'alice' });
      const items = await call<{ data: Array<{ id: string }> }>(
        'GET',
        `/z1/conversations/${alices.id}/items`,
        h.apiKey,
      );
      assert.deepEqual(
        items.body.data.map((i) => i.id),
        [aliceItem],
      );
    };

    it("another account's conversation is 404 for every operation, and stays as it was", async () => {
      for (const [method, path, body] of everyOperation(alices.id, aliceItem)) {
        const res = await call(method, path, otherKey, body);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.code, 'NOT_FOUND');
        assert.equal(res.body.details?.field, 'conversation_id');
        assert.doesNotMatch(res.text, /kiwi-mango/);
      }
      await assertUntouched();
    });

    it("another account's conversation as `conversation` is 404 naming it, even for the same user_id; nothing is asked upstream", async () => {
      const res = await h.create(
        { model: 'PV-TURBO', user_id: 'alice', conversation: alices.id, input: 'What is my locker code?' },
        otherKey,
      );
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'NOT_FOUND');
      assert.equal(res.body.details?.field, 'conversation');
      assert.equal(chatRequests(h.upstream).length, 0);
      await assertUntouched();
    });

    it('another end user of the same account naming it as `conversation` is 404; its own end user continues it', async () => {
      const refused = await h.create({
        model: 'PV-TURBO',
        user_id: 'carol',
        conversation: { id: alices.id },
        input: 'What is my locker code?',
      });
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.body.details?.field, 'conversation');
      assert.equal(chatRequests(h.upstream).length, 0);
      // The account's key names no end user: `default` is one end user like any other, not alice.
      const unnamed = await h.create({ model: 'PV-TURBO', conversation: alices.id, input: 'What is my locker code?' });
      assert.equal(unnamed.status, 404, unnamed.text);
      await assertUntouched();

      const other = await call<Conversation>('POST', '/z1/conversations', h.apiKey, { user_id: 'alice' });
      const allowed = await h.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        skip_cache: true,
        conversation: other.body.id,
        input: 'Hello',
      });
      assert.equal(allowed.status, 200, allowed.text);
      assert.equal(chatRequests(h.upstream).length, 1);
    });

    it('a key bound to an end user sees only its conversations; naming another end user through it is 403', async () => {
      for (const [method, path, body] of everyOperation(alices.id, aliceItem)) {
        const res = await call(method, path, bobKey, body);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.code, 'NOT_FOUND');
      }
      await assertUntouched();
      const asBob = await h.create({ model: 'PV-TURBO', conversation: alices.id, input: 'Locker code?' }, bobKey);
      assert.equal(asBob.status, 404, asBob.text);

      const named = await call('POST', '/z1/conversations', bobKey, { user_id: 'alice' });
      assert.equal(named.status, 403, named.text);
      assert.equal(named.body.code, 'END_USER_NOT_ALLOWED');
      assert.equal(named.body.details?.field, 'user_id');
      const viaUser = await call('POST', '/z1/conversations', bobKey, { user: 'alice' });
      assert.equal(viaUser.status, 403, viaUser.text);
      assert.equal(viaUser.body.details?.field, 'user');
      const respond = await h.create(
        { model: 'PV-TURBO', user_id: 'alice', conversation: alices.id, input: 'x' },
        bobKey,
      );
      assert.equal(respond.status, 403, respond.text);
      assert.equal(respond.body.code, 'END_USER_NOT_ALLOWED');

      // Through it a conversation is bob's, named or not; the account's own key still reads it (and sees its user).
      const bobs = await call<Conversation>('POST', '/z1/conversations', bobKey, {
        items: [{ role: 'user', content: 'Hi' }],
      });
      assert.equal(bobs.body.user_id, 'bob');
      const named2 = await call<Conversation>('POST', '/z1/conversations', bobKey, { user_id: 'bob' });
      assert.equal(named2.status, 200, named2.text);
      for (const id of [bobs.body.id, named2.body.id]) {
        assert.equal((await call('GET', `/z1/conversations/${id}`, bobKey)).status, 200);
        assert.equal((await call<Conversation>('GET', `/z1/conversations/${id}`, h.apiKey)).body.user_id, 'bob');
      }
      const continued = await h.create({ model: 'PV-TURBO', conversation: bobs.body.id, input: 'Hello' }, bobKey);
      assert.equal(continued.status, 200, continued.text);
      // The account's key acts for `default` when it names nobody: bob's conversation is not its end user's.
      const unnamed = await h.create({ model: 'PV-TURBO', conversation: bobs.body.id, input: 'Hello' });
      assert.equal(unnamed.status, 404, unnamed.text);
      const added = await call('POST', `/z1/conversations/${bobs.body.id}/items`, h.apiKey, {
        items: [{ role: 'user', content: 'added by the account' }],
      });
      assert.equal(added.status, 200, added.text);
    });

    it("each operation notes the conversation's end user on its usage row", async () => {
      await call('GET', `/z1/conversations/${alices.id}`, h.apiKey);
      await call('GET', `/z1/conversations/${alices.id}/items`, h.apiKey);
      const rows = await h.server.usageRows<{ endpoint: string; user_id: string | null }>(
        'SELECT endpoint, user_id FROM usage_records WHERE account_id = $1',
        [h.accountId],
      );
      for (const endpoint of ['getConversation', 'listConversationItems', 'createConversation']) {
        const row = rows.find((r) => r.endpoint === endpoint && r.user_id === 'alice');
        assert.ok(row, `${endpoint}: ${JSON.stringify(rows.filter((r) => r.endpoint === endpoint))}`);
      }
    });
  });
}
