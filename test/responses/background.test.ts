import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { BadRequestError } from 'openai';
import { backends } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import {
  type BackgroundEvent,
  collectEvents,
  contiguousFrom,
  deltaText,
  pollUntil,
  until,
  words,
} from './background-support.js';
import { chatRequests, type ErrorBody, type ResponsesHarness, startResponses } from './support.js';

interface UsageRow {
  request_id: string;
  endpoint: string;
  status: number;
  credits: number;
  prompt_tokens: number;
  completion_tokens: number;
  user_id: string | null;
}

const ANSWER = 'Paris is the capital of France.';

/**
 * Background responses (`background: true`) with the official `openai` SDK: queued at once, run by the worker,
 * polled, streamed at creation and resumed after a dropped connection with `starting_after`; charged as their
 * model calls run, with a usage row for the run.
 */
for (const backend of backends()) {
  describe(`background responses run on the durable queue (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, { defaultText: ANSWER, credits: 1000 });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const balance = async () => {
      const res = await h.server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey: h.apiKey });
      return res.body.credits.balance;
    };
    const rowsOf = (accountId: string) =>
      h.server.usageRows<UsageRow>(
        `SELECT request_id, endpoint, status, credits, prompt_tokens, completion_tokens, user_id FROM usage_records
         WHERE account_id = $1 AND endpoint = 'createResponse' ORDER BY id`,
        [accountId],
      );

    it('answers queued at once and charges nothing; polled, it completes, charged once, with a usage row for its run', async () => {
      const before = await balance();
      const rowsBefore = (await rowsOf(h.accountId)).length;
      const { data: queued, response: http } = await h.client.responses
        .create({ model: 'PV-TURBO', input: 'Capital of France?', background: true, safety_identifier: 'alice' })
        .withResponse();
      assert.equal(queued.status, 'queued');
      assert.equal(queued.background, true);
      assert.deepEqual(queued.output, []);
      assert.equal(queued.usage, null);
      assert.equal(http.headers.get('x-credits-charged'), '0');

      const done = await pollUntil(h.client, queued.id, ['completed', 'failed']);
      assert.equal(done.status, 'completed', JSON.stringify(done.error));
      assert.equal(done.id, queued.id);
      assert.equal(done.created_at, queued.created_at);
      assert.equal(done.output_text, ANSWER);
      assert.equal(done.usage?.total_tokens, 19);
      assert.equal(chatRequests(h.upstream).length, 1, 'one model call');
      assert.equal(await balance(), before - 1, 'charged once, as it ran');

      const rows = await eventually(
        () => rowsOf(h.accountId),
        (r) => r.length >= rowsBefore + 2,
      );
      const [post, run] = rows.slice(rowsBefore);
      assert.equal(post?.credits, 0, 'the POST that queued it cost nothing');
      assert.match(post?.request_id ?? '', /^req_/);
      assert.deepEqual(
        [run?.request_id, run?.credits, run?.prompt_tokens, run?.completion_tokens, run?.status, run?.user_id],
        [queued.id, 1, 12, 7, 200, 'alice'],
        'the run has its own row: its credits and tokens, under the response id',
      );
      // The input items are the ones it was created with, ids included.
      const items = await h.client.responses.inputItems.list(queued.id);
      assert.equal(items.data.length, 1);
    });

    it('with stream, answers its events as they are made: created (queued), queued, in_progress … completed', async () => {
      const stream = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Capital of France?',
        background: true,
        stream: true,
      });
      const events = await collectEvents(stream);
      const types = events.map((e) => e.type);
      assert.deepEqual(types.slice(0, 3), ['response.created', 'response.queued', 'response.in_progress']);
      assert.equal(events[0]?.response?.status, 'queued');
      assert.equal(types.at(-1), 'response.completed');
      assert.equal(types.filter((t) => t === 'response.created').length, 1);
      assert.ok(contiguousFrom(events, 0), events.map((e) => e.sequence_number).join(','));
      assert.equal(deltaText(events), ANSWER);
      const id = events[0]?.response?.id ?? '';
      assert.equal((await h.client.responses.retrieve(id)).status, 'completed');

      // Read again from the start: the same events, from the stored log.
      const again = await collectEvents(await h.client.responses.retrieve(id, { stream: true }));
      assert.deepEqual(again, events);
    });

    it('a dropped stream resumes with starting_after: every event it missed, no gap, no repeat, to response.completed', async () => {
      h.upstream.scriptModel('up', { kind: 'slow', chunks: words(12), delayMs: 60 });
      const stream = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Count slowly.',
        background: true,
        stream: true,
      });
      const first: BackgroundEvent[] = [];
      for await (const event of stream) {
        first.push(event as BackgroundEvent);
        if (first.filter((e) => e.type === 'response.output_text.delta').length === 3) break;
      }
      // Leaving the loop aborts the request: the connection is dropped mid-stream.
      const id = first[0]?.response?.id ?? '';
      const last = first.at(-1)?.sequence_number ?? -1;
      const rest = await collectEvents(await h.client.responses.retrieve(id, { stream: true, starting_after: last }));
      assert.equal(rest[0]?.sequence_number, last + 1, 'continues right after the last event read');
      assert.ok(contiguousFrom([...first, ...rest], 0), 'no gap and no repeat');
      assert.equal(rest.at(-1)?.type, 'response.completed');
      assert.equal(deltaText([...first, ...rest]), words(12).join(''));
      assert.equal((await h.client.responses.retrieve(id)).status, 'completed', 'the drop did not stop it');
      // Past the last event: nothing more, and the stream ends.
      const none = await collectEvents(
        await h.client.responses.retrieve(id, { stream: true, starting_after: rest.at(-1)?.sequence_number ?? 0 }),
      );
      assert.deepEqual(none, []);
    });

    it('JSON GET shows it in_progress while it runs', async () => {
      h.upstream.scriptModel('up', { kind: 'slow', chunks: words(10), delayMs: 80 });
      const queued = await h.client.responses.create({ model: 'PV-TURBO', input: 'Slowly.', background: true });
      const running = await pollUntil(h.client, queued.id, ['in_progress', 'completed']);
      assert.equal(running.status, 'in_progress');
      assert.equal((await pollUntil(h.client, queued.id, ['completed'])).status, 'completed');
    });

    it('cancel while in progress: the upstream call is aborted, it ends cancelled, nothing more is charged', async () => {
      h.upstream.scriptModel('up', { kind: 'slow', chunks: words(100), delayMs: 50 });
      const before = await balance();
      const queued = await h.client.responses.create({ model: 'PV-TURBO', input: 'Go on and on.', background: true });
      // A follower reads until the answer began (a model call aborted before its first token is refunded).
      const follower = (await h.client.responses.retrieve(queued.id, { stream: true }))[Symbol.asyncIterator]();
      const seen: BackgroundEvent[] = [];
      while (!seen.some((e) => e.type === 'response.output_text.delta')) {
        seen.push((await follower.next()).value as BackgroundEvent);
      }
      const started = performance.now();
      const cancelled = await h.client.responses.cancel(queued.id);
      assert.equal(cancelled.status, 'cancelled');
      assert.ok(performance.now() - started < 2000, 'answered once it ended, at once on this replica');
      await h.upstream.waitForDisconnects(1, 2000);
      const ended = await h.client.responses.retrieve(queued.id);
      assert.equal(ended.status, 'cancelled');
      const kept = ended.output.find((o) => o.type === 'message');
      assert.ok(kept && kept.type === 'message', 'the message it was writing is kept');
      assert.equal(kept.status, 'incomplete');
      const streamed = seen.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
      const keptText = kept.content[0]?.type === 'output_text' ? kept.content[0].text : '';
      assert.ok(keptText.startsWith(streamed) && keptText.length > 0, 'with the text it wrote before the cancel');
      assert.equal(await balance(), before - 1, 'the model call that started, nothing more');
      for (let next = await follower.next(); !next.done; next = await follower.next()) {
        seen.push(next.value as BackgroundEvent);
      }
      assert.equal(seen.at(-1)?.type, 'response.cancelled', 'the follower saw it end');
      const events = await collectEvents(await h.client.responses.retrieve(queued.id, { stream: true }));
      assert.deepEqual(events, seen);
      assert.ok(contiguousFrom(events, 0));
      // Cancelling again returns it as it ended.
      assert.equal((await h.client.responses.cancel(queued.id)).status, 'cancelled');
      assert.equal(chatRequests(h.upstream).length, 1);
    });

    it('a failure of the first model call ends it failed with that error, stored with its event; refunded', async () => {
      h.upstream.scriptModel('up', { kind: 'status', status: 500 });
      const before = await balance();
      const queued = await h.client.responses.create({ model: 'PV-TURBO', input: 'Fail.', background: true });
      const failed = await pollUntil(h.client, queued.id, ['failed', 'completed']);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error?.code, 'upstream_error');
      const events = await collectEvents(await h.client.responses.retrieve(queued.id, { stream: true }));
      assert.equal(events.at(-1)?.type, 'response.failed');
      assert.equal(await balance(), before, 'refunded, as a chat is');
    });

    it('a request that is not valid is refused with its HTTP error before anything is queued', async () => {
      const db = h.server.running.runtime.db;
      const count = async () => (await db.query('SELECT response_id FROM response_runs')).length;
      const runs = await count();
      const res = await h.create({ model: 'PV-TURBO', input: 'x', background: true, store: false });
      assert.equal(res.status, 400);
      assert.equal(res.body.details?.field, 'background');
      const missing = await h.create({
        model: 'PV-TURBO',
        input: 'x',
        background: true,
        previous_response_id: 'resp_0',
      });
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 'PREVIOUS_RESPONSE_NOT_FOUND');
      assert.equal(await count(), runs, 'nothing queued');
      assert.equal(chatRequests(h.upstream).length, 0);
    });

    it('stream and cancel are for background responses only: 400 naming the field', async () => {
      const plain = await h.client.responses.create({ model: 'PV-TURBO', input: 'Hi' });
      await assert.rejects(
        async () => collectEvents(await h.client.responses.retrieve(plain.id, { stream: true })),
        (err: unknown) => err instanceof BadRequestError && /stream/.test(err.message),
      );
      const stream = await h.server.request<ErrorBody>('GET', `/z1/responses/${plain.id}?stream=true`, {
        apiKey: h.apiKey,
      });
      assert.equal(stream.status, 400);
      assert.equal(stream.body.details?.field, 'stream');
      const cancel = await h.server.request<ErrorBody>('POST', `/z1/responses/${plain.id}/cancel`, {
        apiKey: h.apiKey,
      });
      assert.equal(cancel.status, 400);
      assert.equal(cancel.body.code, 'INVALID_PARAMETER');
    });

    it("another account's, and another end user's through a bound key, is 404 for GET, stream and cancel", async () => {
      h.upstream.scriptModel('up', { kind: 'slow', chunks: words(40), delayMs: 50 });
      const queued = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Secret plans.',
        background: true,
        safety_identifier: 'alice',
      });
      const other = await h.server.createAccount('business', 100);
      const bob = await h.server.request<{ api_key: string }>('POST', `/admin/accounts/${h.accountId}/keys`, {
        admin: true,
        body: { name: 'bob', user_id: 'bob' },
      });
      assert.equal(bob.status, 201, bob.text);
      for (const apiKey of [other.apiKey, bob.body.api_key]) {
        for (const [method, path] of [
          ['GET', `/z1/responses/${queued.id}`],
          ['GET', `/z1/responses/${queued.id}?stream=true`],
          ['POST', `/z1/responses/${queued.id}/cancel`],
        ] as const) {
          const res = await h.server.request<ErrorBody>(method, path, { apiKey });
          assert.equal(res.status, 404, `${method} ${path}`);
          assert.doesNotMatch(res.text, /Secret/);
        }
      }
      assert.notEqual((await h.client.responses.retrieve(queued.id)).status, 'cancelled', 'untouched');
      assert.equal((await h.client.responses.cancel(queued.id)).status, 'cancelled');
    });

    it('DELETE of a running background response cancels it first: its model call is aborted, nothing of it stays', async () => {
      h.upstream.scriptModel('up', { kind: 'slow', chunks: words(100), delayMs: 50 });
      const queued = await h.client.responses.create({ model: 'PV-TURBO', input: 'Forget me.', background: true });
      await until('the model call', () => chatRequests(h.upstream).length === 1);
      await h.client.responses.delete(queued.id);
      await h.upstream.waitForDisconnects(1, 2000);
      await assert.rejects(h.client.responses.retrieve(queued.id), /404/);
      const db = h.server.running.runtime.db;
      assert.deepEqual(await db.query('SELECT response_id FROM response_runs WHERE response_id = $1', [queued.id]), []);
      assert.deepEqual(
        await db.query('SELECT response_id FROM response_events WHERE response_id = $1', [queued.id]),
        [],
      );
      // Its run ending after the delete writes nothing back.
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(await db.query('SELECT id FROM responses WHERE id = $1', [queued.id]), []);
    });

    it("an end user's erase cancels their running background responses and deletes their runs and events", async () => {
      h.upstream.scriptModel('up', { kind: 'slow', chunks: words(100), delayMs: 50 });
      const queued = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Erase me.',
        background: true,
        safety_identifier: 'carol',
      });
      await until('the model call', () => chatRequests(h.upstream).length === 1);
      const erased = await h.server.request<{ erased: { responses: number } }>('DELETE', '/z1/users/carol', {
        apiKey: h.apiKey,
      });
      assert.equal(erased.status, 200, erased.text);
      assert.equal(erased.body.erased.responses, 1);
      await h.upstream.waitForDisconnects(1, 2000);
      const db = h.server.running.runtime.db;
      assert.deepEqual(await db.query('SELECT response_id FROM response_runs WHERE user_id = $1', ['carol']), []);
      assert.deepEqual(
        await db.query('SELECT response_id FROM response_events WHERE response_id = $1', [queued.id]),
        [],
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(await db.query('SELECT id FROM responses WHERE id = $1', [queued.id]), []);
    });
  });
}
