import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { chatRequests, type ResponsesHarness, startResponses, streamResponse } from './support.js';

interface UsageRow {
  endpoint: string;
  model: string | null;
  status: number;
  credits: number;
  cached: unknown;
  prompt_tokens: number;
  completion_tokens: number;
  user_id: string | null;
}

/**
 * A response goes through the same pipeline as a chat completion: credits charged (0 on a cache hit, back on
 * an upstream failure, 402 without them), the tier's rate limit, one usage row naming the end user, and the
 * SLA report's counts.
 */
for (const backend of backends()) {
  describe(`responses are charged, limited and recorded like chat (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, {
        defaultText: 'Paris is the capital of France.',
        tier: 'startup',
        credits: 10,
        config: { tiers: { free: { rpm: 3 }, startup: { rpm: 10_000 } } },
      });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const body = (extra: Record<string, unknown> = {}) => ({
      model: 'PV-TURBO',
      user_id: 'alice',
      input: `What is the capital of France? (${backend})`,
      ...extra,
    });
    const balance = async (apiKey = h.apiKey) => {
      const res = await h.server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey });
      assert.equal(res.status, 200);
      return res.body.credits.balance;
    };
    const rows = (accountId: string) =>
      h.server.usageRows<UsageRow>(
        `SELECT endpoint, model, status, credits, cached, prompt_tokens, completion_tokens, user_id
         FROM usage_records WHERE account_id = $1 AND endpoint = 'createResponse' ORDER BY id`,
        [accountId],
      );
    const summary = (r: UsageRow) => [
      r.endpoint,
      r.model,
      Number(r.status),
      Number(r.credits),
      Boolean(r.cached),
      Number(r.prompt_tokens),
      Number(r.completion_tokens),
      r.user_id,
    ];

    it('charges a credit, serves the repeat from the cache at 0, refunds a failure, and records each with its end user', async () => {
      assert.equal(await balance(), 10);
      const first = await h.create(body());
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('x-cache'), 'MISS');
      assert.equal(first.headers.get('x-credits-charged'), '1');
      assert.equal(await balance(), 9);

      const repeat = await h.create(body());
      assert.equal(repeat.status, 200);
      assert.equal(repeat.headers.get('x-cache'), 'HIT');
      assert.equal(repeat.headers.get('x-credits-charged'), '0');
      assert.notEqual(repeat.body.id, first.body.id, 'a hit is a new response');
      assert.deepEqual(repeat.body.output[0]?.content, first.body.output[0]?.content);
      assert.equal(repeat.body.usage?.input_tokens_details.cached_tokens, 12);
      assert.equal(chatRequests(h.upstream).length, 1, 'the repeat never reached the upstream');
      assert.equal(await balance(), 9);

      const bypass = await h.create(body({ skip_cache: true }));
      assert.equal(bypass.headers.get('x-cache'), 'BYPASS');
      assert.equal(bypass.headers.get('x-credits-charged'), '1');
      const streamed = await streamResponse(h.server, h.apiKey, body({ skip_cache: true }));
      assert.equal(streamed.status, 200);
      assert.equal(streamed.headers.get('x-credits-charged'), '1');
      assert.equal(streamed.events.at(-1)?.data.type, 'response.completed');
      assert.equal(await balance(), 7);

      h.upstream.script({ kind: 'status', status: 500 });
      const failed = await h.create(body({ skip_cache: true }));
      assert.equal(failed.status, 502, failed.text);
      assert.equal(failed.body.code, 'UPSTREAM_ERROR');
      assert.equal(await balance(), 7, 'refunded');

      const recorded = await eventually(
        () => rows(h.accountId),
        (r) => r.length === 5,
      );
      assert.deepEqual(recorded.map(summary), [
        ['createResponse', 'PV-TURBO', 200, 1, false, 12, 7, 'alice'],
        ['createResponse', 'PV-TURBO', 200, 0, true, 0, 0, 'alice'],
        ['createResponse', 'PV-TURBO', 200, 1, false, 12, 7, 'alice'],
        ['createResponse', 'PV-TURBO', 200, 1, false, 12, 7, 'alice'],
        ['createResponse', 'PV-TURBO', 502, 0, false, 0, 0, 'alice'],
      ]);
    });

    it('a streamed response is cached once it ended: its repeat is a HIT at 0 credits, streamed or whole', async () => {
      const question = body({ input: `What is the capital of Italy? (${backend})` });
      const first = await streamResponse(h.server, h.apiKey, question);
      assert.equal(first.headers.get('x-cache'), 'MISS');
      const before = await balance();
      const again = await streamResponse(h.server, h.apiKey, question);
      assert.equal(again.headers.get('x-cache'), 'HIT');
      assert.equal(again.headers.get('x-credits-charged'), '0');
      assert.equal(again.events.at(-1)?.data.type, 'response.completed');
      const whole = await h.create(question);
      assert.equal(whole.headers.get('x-cache'), 'HIT');
      assert.equal(whole.body.output[0]?.content?.[0]?.text, 'Paris is the capital of France.');
      assert.equal(chatRequests(h.upstream).length, 1);
      assert.equal(await balance(), before);
    });

    it('402 INSUFFICIENT_CREDITS without credits, whole or streamed; nothing asked upstream', async () => {
      const broke = await h.server.createAccount('startup', 0);
      for (const stream of [false, true]) {
        const res = await h.create(body({ skip_cache: true, stream }), broke.apiKey);
        assert.equal(res.status, 402, res.text);
        assert.equal(res.body.code, 'INSUFFICIENT_CREDITS');
        assert.equal(res.body.error.code, 'insufficient_credits');
      }
      assert.equal(chatRequests(h.upstream).length, 0);
      assert.equal(await balance(broke.apiKey), 0);
      const recorded = await rows(broke.accountId);
      assert.deepEqual(
        recorded.map((r) => [Number(r.status), Number(r.credits), r.user_id]),
        [
          [402, 0, 'alice'],
          [402, 0, 'alice'],
        ],
      );
    });

    it('the rate limit applies: past the tier rpm a 429 with the X-RateLimit-* headers, before any model call', async () => {
      const limited = await h.server.createAccount('free', 100);
      for (let i = 0; i < 3; i++) {
        const res = await h.create(body({ skip_cache: true }), limited.apiKey);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.get('x-ratelimit-limit'), '3');
        assert.equal(res.headers.get('x-ratelimit-remaining'), String(2 - i));
      }
      for (const stream of [false, true]) {
        const refused = await h.create(body({ skip_cache: true, stream }), limited.apiKey);
        assert.equal(refused.status, 429, refused.text);
        assert.equal(refused.body.code, 'RATE_LIMIT_EXCEEDED');
        assert.equal(refused.headers.get('x-ratelimit-limit'), '3');
        assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
        const reset = Number(refused.headers.get('x-ratelimit-reset'));
        assert.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 61, `reset ${reset}`);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
      }
      assert.equal(chatRequests(h.upstream).length, 3);
    });

    it('GET /z1/sla counts the responses under their model, errors included', async () => {
      const sla = await h.server.createAccount('startup', 100);
      for (const extra of [{}, { stream: true }]) {
        const res = await h.create(body({ skip_cache: true, ...extra }), sla.apiKey);
        assert.equal(res.status, 200);
      }
      h.upstream.script({ kind: 'status', status: 500 });
      assert.equal((await h.create(body({ skip_cache: true }), sla.apiKey)).status, 502);
      const report = await eventually(
        async () =>
          (
            await h.server.request<{ models: Array<{ model: string; requests: number; errors: number }> }>(
              'GET',
              '/z1/sla?window=1h',
              { apiKey: sla.apiKey },
            )
          ).body.models,
        (models) => models.some((m) => m.model === 'PV-TURBO' && m.requests === 3),
      );
      assert.deepEqual(
        report.map((m) => [m.model, m.requests, m.errors]),
        [['PV-TURBO', 3, 1]],
      );
    });
  });
}
