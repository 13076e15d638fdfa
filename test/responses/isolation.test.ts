import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { chatRequests, type ErrorBody, type ResponseBody, type ResponsesHarness, startResponses } from './support.js';

/**
 * Stored responses are the account's (read and deleted by it alone) and a conversation is its end user's
 * (continued by them alone): another account's id is absent everywhere, another end user's response cannot be
 * continued nor its items referenced. Each refusal is checked beside the same request that is allowed.
 */
for (const backend of backends()) {
  describe(`stored responses are isolated by account and end user (${backend})`, () => {
    let h: ResponsesHarness;
    let otherKey: string;
    let alices: ResponseBody;

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Noted.' });
      ({ apiKey: otherKey } = await h.server.createAccount('business', 1000));
      const created = await h.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        input: [{ role: 'user', content: 'My locker code is kiwi-mango.' }],
      });
      assert.equal(created.status, 200, created.text);
      alices = created.body;
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const get = (path: string, apiKey: string) => h.server.request<ErrorBody>('GET', path, { apiKey });

    it("another account's response id is 404 for GET, input_items and DELETE, and it stays", async () => {
      for (const path of [`/z1/responses/${alices.id}`, `/z1/responses/${alices.id}/input_items`]) {
        assert.equal((await get(path, h.apiKey)).status, 200, path);
        const res = await get(path, otherKey);
        assert.equal(res.status, 404, path);
        assert.equal(res.body.code, 'NOT_FOUND');
        assert.doesNotMatch(res.text, /kiwi-mango|Noted/);
      }
      const del = await h.server.request<ErrorBody>('DELETE', `/z1/responses/${alices.id}`, { apiKey: otherKey });
      assert.equal(del.status, 404);
      assert.equal(del.body.code, 'NOT_FOUND');
      assert.equal((await get(`/z1/responses/${alices.id}`, h.apiKey)).status, 200, 'still there for its account');
    });

    it("another account's response as previous_response_id is 404, even for the same user_id, and nothing is asked upstream", async () => {
      const res = await h.create(
        { model: 'PV-TURBO', user_id: 'alice', previous_response_id: alices.id, input: 'What is my locker code?' },
        otherKey,
      );
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'PREVIOUS_RESPONSE_NOT_FOUND');
      assert.equal(res.body.error.code, 'previous_response_not_found', "OpenAI's code for it");
      assert.equal(res.body.details?.field, 'previous_response_id');
      assert.equal(chatRequests(h.upstream).length, 0);
    });

    it('another end user of the same account naming the response as previous_response_id is 404; its own user continues it', async () => {
      const refused = await h.create({
        model: 'PV-TURBO',
        user_id: 'bob',
        previous_response_id: alices.id,
        input: 'What is my locker code?',
      });
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.body.code, 'PREVIOUS_RESPONSE_NOT_FOUND');
      assert.doesNotMatch(refused.text, /kiwi-mango/);
      assert.equal(chatRequests(h.upstream).length, 0);

      const allowed = await h.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        previous_response_id: alices.id,
        input: 'What is my locker code?',
      });
      assert.equal(allowed.status, 200, allowed.text);
      const turns = chatRequests(h.upstream)[0]?.messages.filter((m) => m.role !== 'system');
      assert.deepEqual(turns, [
        { role: 'user', content: 'My locker code is kiwi-mango.' },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: 'What is my locker code?' },
      ]);
    });

    it("an item_reference to another end user's item is 400 naming it; to one's own it is the item", async () => {
      const listed = await h.server.request<{ data: Array<{ id: string }> }>(
        'GET',
        `/z1/responses/${alices.id}/input_items`,
        { apiKey: h.apiKey },
      );
      const [input] = listed.body.data;
      const [answer] = alices.output;
      assert.ok(input && answer);
      for (const id of [input.id, answer.id]) {
        const refused = await h.create({
          model: 'PV-TURBO',
          user_id: 'bob',
          input: [
            { type: 'item_reference', id },
            { role: 'user', content: 'Repeat that.' },
          ],
        });
        assert.equal(refused.status, 400, refused.text);
        assert.equal(refused.body.code, 'INVALID_PARAMETER');
        assert.equal(refused.body.details?.field, 'input[0].id');
        // Another account's user of the same name is as foreign.
        const foreign = await h.create(
          { model: 'PV-TURBO', user_id: 'alice', input: [{ type: 'item_reference', id }] },
          otherKey,
        );
        assert.equal(foreign.status, 400, foreign.text);
      }
      assert.equal(chatRequests(h.upstream).length, 0);

      const allowed = await h.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        skip_cache: true,
        input: [
          { type: 'item_reference', id: input.id },
          { type: 'item_reference', id: answer.id },
          { role: 'user', content: 'Repeat that.' },
        ],
      });
      assert.equal(allowed.status, 200, allowed.text);
      assert.deepEqual(
        chatRequests(h.upstream)[0]?.messages.filter((m) => m.role !== 'system'),
        [
          { role: 'user', content: 'My locker code is kiwi-mango.' },
          { role: 'assistant', content: 'Noted.' },
          { role: 'user', content: 'Repeat that.' },
        ],
      );
    });

    it('a response created with store: false is not kept: GET and previous_response_id are 404', async () => {
      const created = await h.create({ model: 'PV-TURBO', user_id: 'alice', input: 'Hello', store: false });
      assert.equal(created.status, 200, created.text);
      assert.equal((created.body as unknown as { store: boolean }).store, false);
      assert.equal((await get(`/z1/responses/${created.body.id}`, h.apiKey)).status, 404);
      const next = await h.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        previous_response_id: created.body.id,
        input: 'Again',
      });
      assert.equal(next.status, 404, next.text);
    });

    it("an erased end user's responses are gone; another user's stay", async () => {
      const bobs = await h.create({ model: 'PV-TURBO', user_id: 'bob', input: 'Hello from Bob' });
      const carol = await h.create({ model: 'PV-TURBO', user_id: 'carol', input: 'Hello from Carol' });
      const erased = await h.server.request<{ erased: { responses: number } }>('DELETE', '/z1/users/bob', {
        apiKey: h.apiKey,
      });
      assert.equal(erased.status, 200, erased.text);
      assert.equal(erased.body.erased.responses, 1);
      assert.equal((await get(`/z1/responses/${bobs.body.id}`, h.apiKey)).status, 404);
      assert.equal((await get(`/z1/responses/${carol.body.id}`, h.apiKey)).status, 200);
    });
  });
}
