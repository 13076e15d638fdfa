import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { postgresOnly } from '../support/databases.js';
import { openaiClient } from '../support/openai-client.js';
import { startReplica } from '../support/server.js';
import { collectEvents, contiguousFrom, deltaText, pollUntil, until, words } from './background-support.js';
import { chatRequests, type ResponsesHarness, startResponses } from './support.js';

/**
 * Two replicas on one PostgreSQL database, each with its worker: a background response runs once, on either,
 * and is cancelled and followed from the other.
 */
describe('background responses across replicas (postgres)', { skip: postgresOnly() }, () => {
  let h: ResponsesHarness;
  let replica: RunningServer | undefined;

  before(async () => {
    h = await startResponses('postgres', { defaultText: 'Done.', credits: 1000 });
  });
  after(async () => {
    await replica?.close();
    await h?.close();
  });
  beforeEach(() => h.upstream.reset());

  const startSecond = async () => {
    const target = { provider: 'openai-compatible' as const, baseUrl: h.upstream.url, model: 'up', maxRetries: 0 };
    replica = await startReplica(h.server, {
      tiers: { business: { rpm: 10_000 } },
      routing: { 'PV-TURBO': [target] },
    });
    return openaiClient(replica.url, h.apiKey);
  };

  it('a cancel on the other replica aborts the run where it runs, within its poll, and answers it cancelled', {
    timeout: 60_000,
  }, async (t) => {
    h.upstream.scriptModel('up', { kind: 'slow', chunks: words(200), delayMs: 50 });
    const running = await h.client.responses.create({ model: 'PV-TURBO', input: 'Long story.', background: true });
    await pollUntil(h.client, running.id, ['in_progress']);
    await until('the model call', () => chatRequests(h.upstream).length === 1);
    // Started after the run began: the second replica cannot be the one running it.
    const second = await startSecond();
    const asked = performance.now();
    const cancelled = await second.responses.cancel(running.id);
    const waited = performance.now() - asked;
    t.diagnostic(`the cancel answered after ${Math.round(waited)} ms`);
    assert.equal(cancelled.status, 'cancelled');
    assert.ok(waited < 1500, `the cancel waited ${Math.round(waited)} ms`);
    await h.upstream.waitForDisconnects(1, 2000);
    assert.equal((await h.client.responses.retrieve(running.id)).status, 'cancelled');
    const events = await collectEvents(await second.responses.retrieve(running.id, { stream: true }));
    assert.equal(events.at(-1)?.type, 'response.cancelled');
    assert.ok(contiguousFrom(events, 0));
    assert.equal(chatRequests(h.upstream).length, 1);
  });

  it('both replicas follow a response live to its end with the same events, whichever runs it', {
    timeout: 60_000,
  }, async () => {
    const second = replica ? openaiClient(replica.url, h.apiKey) : await startSecond();
    h.upstream.scriptModel('up', { kind: 'slow', chunks: words(20), delayMs: 50 });
    const queued = await h.client.responses.create({ model: 'PV-TURBO', input: 'Count.', background: true });
    const [here, there] = await Promise.all([
      collectEvents(await h.client.responses.retrieve(queued.id, { stream: true })),
      collectEvents(await second.responses.retrieve(queued.id, { stream: true })),
    ]);
    assert.deepEqual(there, here);
    assert.ok(contiguousFrom(here, 0));
    assert.equal(here.at(-1)?.type, 'response.completed');
    assert.equal(deltaText(here), words(20).join(''));
  });

  it('runs each background response once, on either replica', { timeout: 60_000 }, async () => {
    const second = replica ? openaiClient(replica.url, h.apiKey) : await startSecond();
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 === 0 ? h.client : second).responses.create({ model: 'PV-TURBO', input: `n${i}`, background: true }),
      ),
    );
    for (const r of created)
      assert.equal((await pollUntil(h.client, r.id, ['completed', 'failed'])).status, 'completed');
    assert.equal(chatRequests(h.upstream).length, 12, 'one model call each');
  });
});
