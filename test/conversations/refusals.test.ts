import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ErrorBody, type ResponsesHarness, startResponses } from '../responses/support.js';
import { backends } from '../support/databases.js';

/**
 * What /z1/conversations refuses, each refusal with its status, its code and the field at fault: the contract's
 * bounds (ajv), an item a later response could not read (the responses' own 400s, checked when the item is
 * added), ids given twice, an `after` or an item not in the conversation, and the deletion of a function call
 * that an output of the conversation answers. A refused request changes nothing.
 */
interface Item {
  id: string;
  type: string;
  role?: string;
  content?: unknown;
  call_id?: string;
}

for (const backend of backends()) {
  describe(`conversation requests refused (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Noted.' });
    });
    after(() => h?.close());

    const send = <T = ErrorBody>(method: string, path: string, body?: unknown) =>
      h.server.request<T>(method, path, { apiKey: h.apiKey, ...(body === undefined ? {} : { body }) });
    const refused = async (
      res: { status: number; text: string; body: ErrorBody },
      status: number,
      code: string,
      field: string,
    ) => {
      assert.equal(res.status, status, res.text);
      assert.equal(res.body.code, code, res.text);
      assert.equal(res.body.details?.field, field, res.text);
    };
    const conversation = async (items: unknown[] = []) => {
      const res = await send<{ id: string }>('POST', '/z1/conversations', { items });
      assert.equal(res.status, 200, res.text);
      return res.body.id;
    };
    const itemsOf = async (id: string) =>
      (await send<{ data: Item[] }>('GET', `/z1/conversations/${id}/items?order=asc&limit=100`)).body.data;

    it('the contract: more than 20 items, too much metadata, an unknown field, no items to add, a bad limit or order', async () => {
      const many = Array.from({ length: 21 }, () => ({ role: 'user', content: 'x' }));
      await refused(await send('POST', '/z1/conversations', { items: many }), 400, 'INVALID_PARAMETER', 'items');
      const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
      await refused(await send('POST', '/z1/conversations', { metadata }), 400, 'INVALID_PARAMETER', 'metadata');
      await refused(
        await send('POST', '/z1/conversations', { metadata: { k: 'v'.repeat(513) } }),
        400,
        'INVALID_PARAMETER',
        'metadata.k',
      );
      await refused(await send('POST', '/z1/conversations', { title: 'x' }), 400, 'INVALID_PARAMETER', 'title');
      const id = await conversation();
      await refused(
        await send('POST', `/z1/conversations/${id}/items`, { items: [] }),
        400,
        'INVALID_PARAMETER',
        'items',
      );
      await refused(
        await send('POST', `/z1/conversations/${id}/items`, { items: many }),
        400,
        'INVALID_PARAMETER',
        'items',
      );
      await refused(await send('POST', `/z1/conversations/${id}`, {}), 400, 'INVALID_PARAMETER', 'metadata');
      for (const query of ['limit=0', 'limit=101']) {
        await refused(await send('GET', `/z1/conversations/${id}/items?${query}`), 400, 'INVALID_PARAMETER', 'limit');
      }
      await refused(await send('GET', `/z1/conversations/${id}/items?order=up`), 400, 'INVALID_PARAMETER', 'order');
      assert.deepEqual(await itemsOf(id), []);
    });

    it('an item a response could not read is refused when it is added, naming it; nothing of the batch is added', async () => {
      const id = await conversation([{ role: 'user', content: 'Hi' }]);
      const cases: Array<[unknown[], string, string]> = [
        [
          [{ role: 'user', content: [{ type: 'input_file', file_id: 'file_1' }] }],
          'UNSUPPORTED_CONTENT',
          'items[0].content[0]',
        ],
        [
          [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }],
          'UNSUPPORTED_CONTENT',
          'items[0].content[0]',
        ],
        [[{ role: 'user', content: [{ type: 'input_image' }] }], 'INVALID_PARAMETER', 'items[0].content[0].image_url'],
        [
          [{ type: 'function_call_output', call_id: 'call_nowhere', output: 'x' }],
          'INVALID_PARAMETER',
          'items[0].call_id',
        ],
        [
          [
            { role: 'user', content: 'fine' },
            { type: 'function_call', call_id: 'call_a' },
          ],
          'INVALID_PARAMETER',
          'items[1]',
        ],
        [[{ type: 'compaction', encrypted_content: 'not-ours' }], 'INVALID_PARAMETER', 'items[0].encrypted_content'],
        [[{ type: 'item_reference', id: 'msg_nowhere' }], 'INVALID_PARAMETER', 'items[0].id'],
        [[{ content: 'no role, no type' }], 'INVALID_PARAMETER', 'items[0].type'],
        [[{ role: 'robot', content: 'x' }], 'INVALID_PARAMETER', 'items[0].role'],
        [
          [
            { id: 'msg_twice', role: 'user', content: 'a' },
            { id: 'msg_twice', role: 'user', content: 'b' },
          ],
          'INVALID_PARAMETER',
          'items[1].id',
        ],
      ];
      for (const [items, code, field] of cases) {
        await refused(await send('POST', `/z1/conversations/${id}/items`, { items }), 400, code, field);
        // The same refusal when a conversation is created with them: none is made.
        const created = await send('POST', '/z1/conversations', { items });
        await refused(created, 400, code, field);
      }
      // Only the first item: a string given is listed as one input_text part, as OpenAI lists it.
      assert.deepEqual(
        (await itemsOf(id)).map((i) => i.content),
        [[{ type: 'input_text', text: 'Hi' }]],
      );
    });

    it('an id the conversation already holds is refused, and the batch with it; a function_call_output may answer a call it holds', async () => {
      const id = await conversation([
        { id: 'msg_first', role: 'user', content: 'Weather?' },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{}' },
      ]);
      await refused(
        await send('POST', `/z1/conversations/${id}/items`, {
          items: [
            { role: 'user', content: 'new' },
            { id: 'msg_first', role: 'user', content: 'again' },
          ],
        }),
        400,
        'INVALID_PARAMETER',
        'items[1].id',
      );
      assert.equal((await itemsOf(id)).length, 2);
      const answered = await send<{ data: Item[] }>('POST', `/z1/conversations/${id}/items`, {
        items: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
      });
      assert.equal(answered.status, 200, answered.text);
      // The same id in another conversation is another item.
      const other = await conversation([{ id: 'msg_first', role: 'user', content: 'elsewhere' }]);
      assert.equal((await itemsOf(other))[0]?.id, 'msg_first');
    });

    it('an item_reference becomes the item of a stored response of the same end user it names', async () => {
      const response = await h.create({ model: 'PV-TURBO', user_id: 'alice', input: 'Remember kiwi.' });
      assert.equal(response.status, 200, response.text);
      const answer = response.body.output[0];
      assert.ok(answer);
      const created = await send<{ id: string }>('POST', '/z1/conversations', {
        user_id: 'alice',
        items: [{ type: 'item_reference', id: answer.id }],
      });
      assert.equal(created.status, 200, created.text);
      assert.deepEqual(await itemsOf(created.body.id), [answer]);
      // Another end user's reference to it names nothing.
      await refused(
        await send('POST', '/z1/conversations', { user_id: 'bob', items: [{ type: 'item_reference', id: answer.id }] }),
        400,
        'INVALID_PARAMETER',
        'items[0].id',
      );
    });

    it('an image in a user message is kept; continuing on a model that reads text only is 400 naming it', async () => {
      const image = { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' };
      const id = await conversation([
        { role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, image] },
      ]);
      const [item] = await itemsOf(id);
      assert.deepEqual(item?.content, [{ type: 'input_text', text: 'What is this?' }, image]);
      const res = await h.create({ model: 'PV-TURBO', conversation: id, input: 'Well?' });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'UNSUPPORTED_CONTENT');
      assert.equal(res.body.details?.field, 'conversation.items[0].content[1]');
    });

    it('an absent conversation, item or `after` is 404 naming it', async () => {
      await refused(await send('GET', '/z1/conversations/conv_nowhere'), 404, 'NOT_FOUND', 'conversation_id');
      const id = await conversation([{ role: 'user', content: 'Hi' }]);
      await refused(await send('GET', `/z1/conversations/${id}/items/msg_nowhere`), 404, 'NOT_FOUND', 'item_id');
      await refused(await send('DELETE', `/z1/conversations/${id}/items/msg_nowhere`), 404, 'NOT_FOUND', 'item_id');
      await refused(await send('GET', `/z1/conversations/${id}/items?after=msg_nowhere`), 404, 'NOT_FOUND', 'after');
      // An item of another conversation is not this one's.
      const other = await conversation([{ role: 'user', content: 'elsewhere' }]);
      const foreign = (await itemsOf(other))[0]?.id ?? '';
      await refused(await send('GET', `/z1/conversations/${id}/items/${foreign}`), 404, 'NOT_FOUND', 'item_id');
      await refused(await send('GET', `/z1/conversations/${id}/items?after=${foreign}`), 404, 'NOT_FOUND', 'after');
    });

    it('a function_call answered in the conversation cannot be deleted before its output; after it, it can', async () => {
      const id = await conversation([
        { role: 'user', content: 'Weather?' },
        { type: 'function_call', id: 'fc_mine', call_id: 'call_1', name: 'weather', arguments: '{}' },
        { type: 'function_call_output', id: 'fco_mine', call_id: 'call_1', output: 'sunny' },
      ]);
      await refused(await send('DELETE', `/z1/conversations/${id}/items/fc_mine`), 400, 'INVALID_PARAMETER', 'item_id');
      assert.equal((await itemsOf(id)).length, 3);
      assert.equal((await send('DELETE', `/z1/conversations/${id}/items/fco_mine`)).status, 200);
      assert.equal((await send('DELETE', `/z1/conversations/${id}/items/fc_mine`)).status, 200);
      // What is left a response reads.
      const res = await h.create({ model: 'PV-TURBO', conversation: id, input: 'And tomorrow?' });
      assert.equal(res.status, 200, res.text);
    });

    it("a response's input item already in its conversation is 400 naming it, as OpenAI refuses a duplicate item", async () => {
      const id = await conversation([{ id: 'msg_first', role: 'user', content: 'Hello' }]);
      const before = h.upstream.requests.length;
      const res = await h.create({
        model: 'PV-TURBO',
        conversation: id,
        input: [
          { type: 'message', role: 'user', content: 'New' },
          { id: 'msg_first', type: 'message', role: 'user', content: 'Hello' },
        ],
      });
      await refused(res, 400, 'INVALID_PARAMETER', 'input[1].id');
      assert.equal(h.upstream.requests.length, before, 'nothing reached the model');
      assert.equal((await itemsOf(id)).length, 1, 'nothing was appended');
    });
  });
}
