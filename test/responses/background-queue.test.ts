import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { openaiClient } from '../support/openai-client.js';
import { collectEvents, contiguousFrom, pollUntil, until } from './background-support.js';
import { chatRequests, type ResponsesHarness, startResponses } from './support.js';

/**
 * Background responses that wait on the queue: one run at a time on this server (`backgroundConcurrency: 1`),
 * so a second response stays `queued` while the first one's model call hangs.
 */
for (const backend of backends()) {
  describe(`queued background responses (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, {
        defaultText: 'Done.',
        credits: 1000,
        config: { responses: { backgroundConcurrency: 1 } },
      });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const balance = async () => {
      const res = await h.server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey: h.apiKey });
      return res.body.credits.balance;
    };
    /** A first response whose model call never answers: it holds the only run slot. */
    const holdTheSlot = async () => {
      h.upstream.script({ kind: 'hang' });
      const first = await h.client.responses.create({ model: 'PV-TURBO', input: 'Hold on.', background: true });
      await until('the first model call', () => chatRequests(h.upstream).length === 1);
      return first;
    };

    it('cancel while queued: cancelled at once, no model call, nothing charged; the queue goes on', async () => {
      const first = await holdTheSlot();
      const before = await balance();
      const second = await h.client.responses.create({ model: 'PV-TURBO', input: 'Wait.', background: true });
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal((await h.client.responses.retrieve(second.id)).status, 'queued', 'waits for the slot');

      const started = performance.now();
      const cancelled = await h.client.responses.cancel(second.id);
      assert.equal(cancelled.status, 'cancelled');
      assert.ok(performance.now() - started < 1000, `at once: ${performance.now() - started} ms`);
      assert.equal(chatRequests(h.upstream).length, 1, 'no model call for it');
      const events = await collectEvents(await h.client.responses.retrieve(second.id, { stream: true }));
      assert.deepEqual(
        events.map((e) => e.type),
        ['response.created', 'response.queued', 'response.cancelled'],
      );
      assert.ok(contiguousFrom(events, 0));
      assert.equal(await balance(), before, 'nothing charged');

      assert.equal((await h.client.responses.cancel(first.id)).status, 'cancelled');
      await h.upstream.waitForDisconnects(1, 2000);
      // The slot is free again: the next one runs.
      const third = await h.client.responses.create({ model: 'PV-TURBO', input: 'Next.', background: true });
      assert.equal((await pollUntil(h.client, third.id, ['completed', 'failed'])).status, 'completed');
    });

    it('a key revoked while its response was queued: the response ends failed (unauthorized), no model call', async () => {
      const first = await holdTheSlot();
      const made = await h.server.request<{ key: { id: string }; api_key: string }>(
        'POST',
        `/admin/accounts/${h.accountId}/keys`,
        { admin: true, body: { name: 'short-lived' } },
      );
      assert.equal(made.status, 201, made.text);
      const queued = await openaiClient(h.server.url, made.body.api_key).responses.create({
        model: 'PV-TURBO',
        input: 'Queued under a key about to go.',
        background: true,
      });
      const revoked = await h.server.request('DELETE', `/admin/keys/${made.body.key.id}`, { admin: true });
      assert.equal(revoked.status, 200, revoked.text);
      await h.client.responses.cancel(first.id);

      const failed = await pollUntil(h.client, queued.id, ['failed', 'completed']);
      assert.equal(failed.status, 'failed');
      assert.equal(failed.error?.code, 'unauthorized');
      assert.match(failed.error?.message ?? '', /revoked/);
      assert.equal(chatRequests(h.upstream).length, 1, 'only the first one called the model');
    });
  });
}
