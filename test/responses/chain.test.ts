import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { MAX_CHAIN_BYTES, MAX_CHAIN_DEPTH } from '../../src/responses/chain.js';
import { backends } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { responsesSocketUrl, TestSocket } from '../support/websocket.js';
import { pollUntil } from './background-support.js';
import {
  chatRequests,
  type ErrorBody,
  type ResponseBody,
  type ResponsesHarness,
  startResponses,
  type UpstreamMessage,
} from './support.js';

interface ItemList {
  data: Array<{ id: string; type: string; role?: string; content?: Array<{ text: string }> }>;
  has_more: boolean;
  last_id: string | null;
}

interface ExportBody {
  responses: Array<{ response: { id: string }; input_items: Array<{ content: unknown }> }>;
}

const question = (i: number) => `Turn ${i}: remember fact number ${i} about the harbour plan.`;
const answer = (i: number) => `Noted fact ${i}.`;
/** The conversation of `turns` turns as the model must get it (a question and its answer each, then `next`). */
const expected = (turns: number, next: string) => [
  ...Array.from({ length: turns }, (_, i) => [
    { role: 'user', content: question(i) },
    { role: 'assistant', content: answer(i) },
  ]).flat(),
  { role: 'user', content: next },
];
const turnsOf = (messages: UpstreamMessage[]) =>
  messages.filter((m) => m.role !== 'system').map((m) => ({ role: m.role, content: m.content }));

/**
 * Chains of `previous_response_id` are stored a turn per response with a link to the one before (not the whole
 * conversation per response): the model, `input_items`, compaction, background runs, the export and the erase all
 * read the whole chain; its length and size are bounded (400 naming `previous_response_id`); a chain with a
 * deleted link is not continued (404 naming the deleted response); rows stored whole before chains still read.
 */
for (const backend of backends()) {
  describe(`response chains are stored a turn per response (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend);
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const db = () => h.server.running.runtime.db;
    /** A chain of `turns` turns for `user`, each answered `answer(i)`; the responses in order. */
    const chain = async (turns: number, user = 'default', from: string | null = null) => {
      const ids: string[] = [];
      let previous = from;
      for (let i = 0; i < turns; i++) {
        h.upstream.script({ kind: 'answer', text: answer(i) });
        const res = await h.create({
          model: 'PV-TURBO',
          user_id: user,
          input: question(i),
          ...(previous ? { previous_response_id: previous } : {}),
        });
        assert.equal(res.status, 200, res.text);
        previous = res.body.id;
        ids.push(previous);
      }
      return ids;
    };
    const continueFrom = (id: string, input = 'And now?', user = 'default') =>
      h.create({ model: 'PV-TURBO', user_id: user, input, previous_response_id: id });
    const inputItems = async (id: string, query = '') => {
      const res = await h.server.request<ItemList>('GET', `/z1/responses/${id}/input_items${query}`, {
        apiKey: h.apiKey,
      });
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const storedRow = async (id: string) => {
      const [row] = await db().query('SELECT * FROM responses WHERE id = $1', [id]);
      assert.ok(row, id);
      return row;
    };

    it('a chain of 12 turns: the model gets every turn in order, and input_items lists them all, paged', async () => {
      const ids = await chain(12);
      h.upstream.reset();
      const next = await continueFrom(ids.at(-1) ?? '', 'What was fact 3?');
      assert.equal(next.status, 200, next.text);
      const [sent] = chatRequests(h.upstream);
      assert.deepEqual(turnsOf(sent?.messages ?? []), expected(12, 'What was fact 3?'));

      const all = await inputItems(next.body.id, '?order=asc&limit=100');
      assert.equal(all.has_more, false);
      const texts = all.data.map((item) => `${item.role}: ${item.content?.map((c) => c.text).join('')}`);
      assert.deepEqual(
        texts,
        expected(12, 'What was fact 3?').map((m) => `${m.role}: ${m.content}`),
      );
      // Newest first by default, a page at a time with `after`.
      const first = await inputItems(next.body.id, '?limit=20');
      assert.equal(first.data.length, 20);
      assert.equal(first.has_more, true);
      assert.equal(first.data[0]?.id, all.data.at(-1)?.id);
      const second = await inputItems(next.body.id, `?limit=20&after=${first.last_id}`);
      assert.equal(second.data.length, 5);
      assert.equal(second.has_more, false);
      assert.deepEqual(
        [...first.data, ...second.data].map((i) => i.id),
        all.data.map((i) => i.id).reverse(),
      );
    });

    it('stores each turn once: a row of the 120th response is as small as the 2nd, and the chain counts its depth and bytes', async () => {
      const ids = await chain(120);
      const second = await storedRow(ids[1] ?? '');
      const last = await storedRow(ids.at(-1) ?? '');
      assert.equal(last.previous_response_id, ids.at(-2));
      assert.equal(Number(last.chain_depth), 120);
      const bytes = (row: Record<string, unknown>) => Buffer.byteLength(String(row.conversation));
      // One turn, not the conversation so far (the 120th's numbers have a digit more).
      assert.ok(bytes(last) <= bytes(second) + 10, `${bytes(last)} bytes stored, ${bytes(second)} for the 2nd`);
      const rows = await db().query(
        `SELECT conversation FROM responses WHERE id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
        ids,
      );
      assert.equal(
        Number(last.context_bytes),
        rows.map(bytes).reduce((a, b) => a + b, 0),
      );
      const [items] = await db().query(
        `SELECT COUNT(*) AS n FROM response_items WHERE response_id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
        ids,
      );
      assert.equal(Number(items?.n), 240, 'each response its own input and output item');
    });

    it(`a chain of ${MAX_CHAIN_DEPTH} responses is not continued: 400 PREVIOUS_RESPONSE_CHAIN_TOO_LONG, nothing asked upstream`, async () => {
      const [id = ''] = await chain(1);
      // A thousand turns over HTTP take minutes: the depth the store keeps is set as a long chain leaves it.
      await db().query('UPDATE responses SET chain_depth = $1 WHERE id = $2', [MAX_CHAIN_DEPTH - 1, id]);
      const last = await continueFrom(id);
      assert.equal(last.status, 200, 'the thousandth response is taken');
      assert.equal(Number((await storedRow(last.body.id)).chain_depth), MAX_CHAIN_DEPTH);
      h.upstream.reset();
      const refused = await continueFrom(last.body.id);
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'PREVIOUS_RESPONSE_CHAIN_TOO_LONG');
      assert.equal(refused.body.details?.field, 'previous_response_id');
      assert.equal(refused.body.details?.limit_responses, MAX_CHAIN_DEPTH);
      assert.match(refused.body.message, /compact/);
      assert.equal(chatRequests(h.upstream).length, 0);
    });

    it('a chain whose conversation would pass the byte limit is not continued; under it, it is', async () => {
      const [id = ''] = await chain(1);
      await db().query('UPDATE responses SET context_bytes = $1 WHERE id = $2', [MAX_CHAIN_BYTES - 100, id]);
      const refused = await continueFrom(id, 'x'.repeat(200));
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'PREVIOUS_RESPONSE_CHAIN_TOO_LONG');
      assert.equal(refused.body.details?.field, 'previous_response_id');
      assert.equal(refused.body.details?.limit_bytes, MAX_CHAIN_BYTES);
      assert.equal(chatRequests(h.upstream).length, 0);
      assert.equal((await continueFrom(id, 'ok')).status, 200);
    });

    it('deleting a response in the middle: the responses after it are kept, but their chain is not continued (404 naming it)', async () => {
      const [a = '', b = '', c = ''] = await chain(3);
      const del = await h.server.request('DELETE', `/z1/responses/${b}`, { apiKey: h.apiKey });
      assert.equal(del.status, 200, del.text);
      h.upstream.reset();
      const refused = await continueFrom(c);
      assert.equal(refused.status, 404, refused.text);
      assert.equal(refused.body.code, 'PREVIOUS_RESPONSE_NOT_FOUND');
      assert.equal(refused.body.details?.field, 'previous_response_id');
      assert.equal(refused.body.details?.deleted_response_id, b);
      assert.match(refused.body.message, new RegExp(b));
      assert.equal(chatRequests(h.upstream).length, 0, 'the model never gets a conversation with a hole');
      assert.equal((await h.server.request('GET', `/z1/responses/${c}`, { apiKey: h.apiKey })).status, 200);
      const left = await inputItems(c, '?order=asc');
      assert.deepEqual(
        left.data.map((i) => i.content?.[0]?.text),
        [question(2)],
        'its own input: what came before went with the deleted response',
      );
      const fromA = await continueFrom(a, 'Still there?');
      assert.equal(fromA.status, 200, 'the part before the deleted response is whole');
    });

    it('the export lists every response of a chain with its own input; the erase deletes them all', async () => {
      const ids = await chain(4, 'eve');
      const exported = await h.server.request<ExportBody>('GET', '/z1/users/eve/export', { apiKey: h.apiKey });
      assert.equal(exported.status, 200, exported.text);
      const byId = new Map(exported.body.responses.map((r) => [r.response.id, r.input_items]));
      assert.deepEqual([...byId.keys()].sort(), [...ids].sort());
      ids.forEach((id, i) => {
        assert.deepEqual(
          byId.get(id)?.map((item) => item.content),
          [[{ type: 'input_text', text: question(i) }]],
        );
      });
      const erased = await h.server.request<{ erased: { responses: number } }>('DELETE', '/z1/users/eve', {
        apiKey: h.apiKey,
      });
      assert.equal(erased.status, 200, erased.text);
      assert.equal(erased.body.erased.responses, 4);
      const rows = await db().query('SELECT id FROM responses WHERE account_id = $1 AND user_id = $2', [
        h.accountId,
        'eve',
      ]);
      assert.equal(rows.length, 0);
      const items = await db().query('SELECT id FROM response_items WHERE account_id = $1 AND user_id = $2', [
        h.accountId,
        'eve',
      ]);
      assert.equal(items.length, 0);
      assert.equal((await continueFrom(ids.at(-1) ?? '', 'Hello?', 'eve')).status, 404);
    });

    it('a response stored whole before chains (no link) is continued, and a chain grows from it', async () => {
      const id = 'resp_storedwholebeforechains000000';
      const whole = expected(2, question(2)).slice(0, 4);
      const body = { id, object: 'response', status: 'completed', output: [], previous_response_id: 'resp_gone' };
      await db().query(
        `INSERT INTO responses (id, account_id, user_id, created_at, body, conversation, context_bytes)
         VALUES ($1, $2, 'default', 1, $3, $4, $5)`,
        [id, h.accountId, JSON.stringify(body), JSON.stringify(whole), JSON.stringify(whole).length],
      );
      const own = { type: 'message', role: 'user', content: [{ type: 'input_text', text: question(1) }] };
      await db().query(
        `INSERT INTO response_items (response_id, kind, ordinal, id, account_id, user_id, item)
         VALUES ($1, 'input', 0, 'msg_old1', $2, 'default', $3)`,
        [id, h.accountId, JSON.stringify({ ...own, id: 'msg_old1' })],
      );
      h.upstream.script({ kind: 'answer', text: answer(2) });
      const next = await continueFrom(id, question(2));
      assert.equal(next.status, 200, next.text);
      const after = await continueFrom(next.body.id, 'And fact 0?');
      assert.equal(after.status, 200, after.text);
      const sent = chatRequests(h.upstream).at(-1);
      assert.deepEqual(turnsOf(sent?.messages ?? []), expected(3, 'And fact 0?'));
      const items = await inputItems(after.body.id, '?order=asc');
      assert.deepEqual(
        items.data.map((i) => i.content?.[0]?.text),
        [question(1), question(2), answer(2), 'And fact 0?'],
        'the old row lists the input it was created with',
      );
    });

    it('compacting a chain through previous_response_id keeps the user messages of every turn', async () => {
      const ids = await chain(5);
      h.upstream.script({ kind: 'answer', text: 'Notes.' });
      const res = await h.server.request<{ output: Array<{ type: string; content?: Array<{ text: string }> }> }>(
        'POST',
        '/z1/responses/compact',
        { apiKey: h.apiKey, body: { model: 'PV-TURBO', previous_response_id: ids.at(-1) } },
      );
      assert.equal(res.status, 200, res.text);
      const users = res.body.output.filter((o) => o.type === 'message').map((o) => o.content?.[0]?.text);
      assert.deepEqual(
        users,
        Array.from({ length: 5 }, (_, i) => question(i)),
      );
      const [sent] = chatRequests(h.upstream);
      const transcript = sent?.messages.at(-1)?.content ?? '';
      for (let i = 0; i < 5; i++) assert.ok(transcript.includes(answer(i)), `answer ${i} in the transcript`);
    });

    it("on a WebSocket: a store: false response continues a stored chain, and a stored one after it keeps the whole conversation (the socket's is not there to link to)", async () => {
      const ids = await chain(2);
      const socket = await TestSocket.open(responsesSocketUrl(h.server.url), { Authorization: `Bearer ${h.apiKey}` });
      try {
        h.upstream.reset();
        h.upstream.script({ kind: 'answer', text: answer(2) });
        const local = await socket.turn({
          type: 'response.create',
          model: 'PV-TURBO',
          store: false,
          previous_response_id: ids.at(-1),
          input: question(2),
        });
        const localId = local.at(-1)?.response?.id ?? '';
        assert.equal(local.at(-1)?.type, 'response.completed', JSON.stringify(local.at(-1)));
        h.upstream.script({ kind: 'answer', text: answer(3) });
        const stored = await socket.turn({
          type: 'response.create',
          model: 'PV-TURBO',
          previous_response_id: localId,
          input: question(3),
        });
        const storedId = stored.at(-1)?.response?.id ?? '';
        assert.equal(stored.at(-1)?.type, 'response.completed', JSON.stringify(stored.at(-1)));
        // The last event may go out before the response is written (PostgreSQL).
        const [row] = await eventually(
          () => db().query('SELECT * FROM responses WHERE id = $1', [storedId]),
          (rows) => rows.length === 1,
        );
        assert.ok(row, storedId);
        assert.equal(row.previous_response_id, null);
        assert.equal(Number(row.chain_depth), 1);
        // Continued over HTTP once the socket is gone: the whole conversation is there.
        await socket.close();
        h.upstream.reset();
        const next = await continueFrom(storedId, 'Fact 0?');
        assert.equal(next.status, 200, next.text);
        assert.deepEqual(turnsOf(chatRequests(h.upstream).at(-1)?.messages ?? []), expected(4, 'Fact 0?'));
      } finally {
        await socket.close().catch(() => undefined);
      }
    });

    it('a background response continuing a chain runs with its whole conversation', async () => {
      const ids = await chain(3);
      h.upstream.reset();
      const queued = await h.create<ResponseBody & ErrorBody>({
        model: 'PV-TURBO',
        input: 'In the background: fact 1?',
        previous_response_id: ids.at(-1),
        background: true,
      });
      assert.equal(queued.status, 200, queued.text);
      const done = await pollUntil(h.client, queued.body.id, ['completed', 'failed']);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      const [sent] = chatRequests(h.upstream);
      assert.deepEqual(turnsOf(sent?.messages ?? []), expected(3, 'In the background: fact 1?'));
      const row = await storedRow(queued.body.id);
      assert.equal(row.previous_response_id, ids.at(-1));
      assert.equal(Number(row.chain_depth), 4);
    });
  });
}
