import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NotFoundError } from 'openai';
import type { ConversationItem } from 'openai/resources/conversations/items';
import { type ResponsesHarness, startResponses } from '../responses/support.js';
import { backends } from '../support/databases.js';

/**
 * The official `openai` SDK (the pinned devDependency), unmodified but for its base URL, on /z1/conversations
 * over real HTTP: every method of `client.conversations` and `client.conversations.items`, auto-paging included;
 * every JSON answer is checked against the contract by the client's fetch.
 */
const CONV_ID = /^conv_[0-9a-f]{32}$/;
const MSG_ID = /^msg_[0-9a-f]{32}$/;

/** The texts of message items, in the order given. */
function texts(items: readonly ConversationItem[]): string[] {
  return items.map((i) => {
    if (i.type !== 'message') return `(${i.type})`;
    const content = (i as { content: unknown }).content;
    if (typeof content === 'string') return content;
    return (content as Array<{ text?: string }>).map((p) => p.text ?? '').join('');
  });
}

for (const backend of backends()) {
  describe(`the openai SDK's conversations API (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend);
    });
    after(() => h?.close());

    it('create with items and metadata, retrieve, update the metadata, delete: then every call is 404', async () => {
      const created = await h.client.conversations.create({
        metadata: { topic: 'demo' },
        items: [
          { type: 'message', role: 'user', content: 'Hello!' },
          // An assistant message with output_text parts, as a response made it (the SDK's type wants its id and status).
          { role: 'assistant', content: [{ type: 'output_text', text: 'Hi there.', annotations: [] }] } as never,
        ],
      });
      assert.match(created.id, CONV_ID);
      assert.equal(created.object, 'conversation');
      assert.deepEqual(created.metadata, { topic: 'demo' });
      assert.equal((created as unknown as { user_id: string }).user_id, 'default', "the key's end user");
      assert.ok(Math.abs(created.created_at - Date.now() / 1000) < 60, String(created.created_at));

      const got = await h.client.conversations.retrieve(created.id);
      assert.deepEqual(got, created);

      const updated = await h.client.conversations.update(created.id, { metadata: { topic: 'project-x', lang: 'en' } });
      assert.deepEqual(updated.metadata, { topic: 'project-x', lang: 'en' });
      assert.deepEqual((await h.client.conversations.retrieve(created.id)).metadata, {
        topic: 'project-x',
        lang: 'en',
      });
      const cleared = await h.server.request<{ metadata: unknown }>('POST', `/z1/conversations/${created.id}`, {
        apiKey: h.apiKey,
        body: { metadata: null },
      });
      assert.equal(cleared.status, 200, cleared.text);
      assert.deepEqual(cleared.body.metadata, {}, 'null metadata: none');

      const items = await h.client.conversations.items.list(created.id, { order: 'asc' });
      assert.deepEqual(texts(items.data), ['Hello!', 'Hi there.']);
      for (const item of items.data) {
        assert.match(item.id ?? '', MSG_ID);
        assert.equal((item as { status?: string }).status, 'completed', 'a message without status says completed');
      }

      const deleted = await h.client.conversations.delete(created.id);
      assert.deepEqual(deleted, { id: created.id, object: 'conversation.deleted', deleted: true });
      const refusals = await Promise.all([
        h.client.conversations.retrieve(created.id).catch((e: unknown) => e),
        h.client.conversations.update(created.id, { metadata: {} }).catch((e: unknown) => e),
        h.client.conversations.delete(created.id).catch((e: unknown) => e),
        h.client.conversations.items.list(created.id).catch((e: unknown) => e),
        h.client.conversations.items
          .create(created.id, { items: [{ role: 'user', content: 'x' }] })
          .catch((e: unknown) => e),
        h.client.conversations.items
          .retrieve(items.data[0]?.id ?? '', { conversation_id: created.id })
          .catch((e: unknown) => e),
        h.client.conversations.items
          .delete(items.data[0]?.id ?? '', { conversation_id: created.id })
          .catch((e: unknown) => e),
      ]);
      for (const refusal of refusals) {
        assert.ok(refusal instanceof NotFoundError, String(refusal));
        assert.equal((refusal.error as { code?: string }).code, 'not_found');
      }
    });

    it('create with nothing: no items, metadata {}', async () => {
      const created = await h.client.conversations.create();
      assert.deepEqual(created.metadata, {});
      const items = await h.client.conversations.items.list(created.id);
      assert.deepEqual(items.data, []);
      assert.equal(items.has_more, false);
      const raw = await h.server.request('GET', `/z1/conversations/${created.id}/items`, { apiKey: h.apiKey });
      assert.deepEqual(raw.body, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    });

    it('items.create answers the items added, in order, with ids of their kind; given ids are kept', async () => {
      const { id } = await h.client.conversations.create();
      const added = await h.client.conversations.items.create(id, {
        items: [
          { type: 'message', role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_1', output: '{"temp":21}' },
          { type: 'message', id: 'msg_mine', role: 'assistant', content: 'It is 21 degrees.', status: 'incomplete' },
        ],
      });
      assert.equal(added.object, 'list');
      assert.equal(added.has_more, false);
      assert.deepEqual(
        added.data.map((i) => i.type),
        ['message', 'function_call', 'function_call_output', 'message'],
      );
      const [question, call, output, answer] = added.data;
      assert.match(question?.id ?? '', MSG_ID);
      assert.match(call?.id ?? '', /^fc_[0-9a-f]{32}$/);
      assert.match(output?.id ?? '', /^fco_[0-9a-f]{32}$/);
      assert.equal(answer?.id, 'msg_mine');
      assert.equal((answer as { status?: string }).status, 'incomplete', 'a given status is kept');
      assert.equal(added.first_id, question?.id);
      assert.equal(added.last_id, 'msg_mine');

      const one = await h.client.conversations.items.retrieve(call?.id ?? '', { conversation_id: id });
      assert.deepEqual(one, call);
      assert.deepEqual(
        { ...one },
        {
          id: call?.id,
          type: 'function_call',
          call_id: 'call_1',
          name: 'weather',
          arguments: '{"city":"Paris"}',
        },
      );
    });

    it('items.list: newest first by default, asc on request, pages with after, has_more, first_id and last_id; auto-paging walks them all', async () => {
      const { id } = await h.client.conversations.create({
        items: Array.from({ length: 5 }, (_, i) => ({ role: 'user' as const, content: `m${i}` })),
      });
      await h.client.conversations.items.create(id, {
        items: Array.from({ length: 3 }, (_, i) => ({ role: 'user' as const, content: `m${5 + i}` })),
      });
      const all = Array.from({ length: 8 }, (_, i) => `m${i}`);

      const newest = await h.client.conversations.items.list(id);
      assert.deepEqual(texts(newest.data), [...all].reverse());
      assert.equal(newest.has_more, false);

      const first = await h.client.conversations.items.list(id, { order: 'asc', limit: 3 });
      assert.deepEqual(texts(first.data), ['m0', 'm1', 'm2']);
      assert.equal(first.has_more, true);
      assert.equal(first.last_id, first.data[2]?.id);
      // The SDK's page keeps only last_id: first_id as on the wire.
      const raw = await h.server.request<{ first_id: string; last_id: string }>(
        'GET',
        `/z1/conversations/${id}/items?order=asc&limit=3`,
        { apiKey: h.apiKey },
      );
      assert.deepEqual([raw.body.first_id, raw.body.last_id], [first.data[0]?.id, first.data[2]?.id]);
      const second = await h.client.conversations.items.list(id, { order: 'asc', limit: 3, after: first.last_id });
      assert.deepEqual(texts(second.data), ['m3', 'm4', 'm5']);
      const third = await h.client.conversations.items.list(id, { order: 'asc', limit: 3, after: second.last_id });
      assert.deepEqual(texts(third.data), ['m6', 'm7']);
      assert.equal(third.has_more, false);
      const exact = await h.client.conversations.items.list(id, { order: 'asc', limit: 2, after: second.last_id });
      assert.equal(exact.has_more, false, 'a page that ends with the last item has no more');

      const back = await h.client.conversations.items.list(id, { order: 'desc', limit: 3, after: third.data[0]?.id });
      assert.deepEqual(texts(back.data), ['m5', 'm4', 'm3'], 'desc after an item: the older ones');

      const walked: ConversationItem[] = [];
      for await (const item of h.client.conversations.items.list(id, { limit: 3 })) walked.push(item);
      assert.deepEqual(texts(walked), [...all].reverse());
      const walkedAsc: ConversationItem[] = [];
      for await (const item of h.client.conversations.items.list(id, { limit: 2, order: 'asc' })) walkedAsc.push(item);
      assert.deepEqual(texts(walkedAsc), all);
    });

    it('items.delete answers the conversation; the item is gone from the list and retrieve is 404', async () => {
      const created = await h.client.conversations.create({
        metadata: { k: 'v' },
        items: [
          { role: 'user', content: 'keep' },
          { role: 'user', content: 'drop' },
        ],
      });
      const listed = await h.client.conversations.items.list(created.id, { order: 'asc' });
      const drop = listed.data[1]?.id ?? '';
      const answer = await h.client.conversations.items.delete(drop, { conversation_id: created.id });
      assert.deepEqual(answer, created);
      assert.deepEqual(texts((await h.client.conversations.items.list(created.id)).data), ['keep']);
      await assert.rejects(
        h.client.conversations.items.retrieve(drop, { conversation_id: created.id }),
        (e: unknown) => e instanceof NotFoundError,
      );
      await assert.rejects(
        h.client.conversations.items.delete(drop, { conversation_id: created.id }),
        (e: unknown) => e instanceof NotFoundError,
      );
    });
  });
}
