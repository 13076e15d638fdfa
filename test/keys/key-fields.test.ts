import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { chatBody, manualClock, startTestServer, type TestServer } from '../support/server.js';

type Key = Record<string, unknown> & { id: string };
/** A created key, or the error body of a refusal. */
type Created = { key: Key; api_key: string; code?: string; message?: string; details?: unknown };

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

/** A key's own limits over the admin API: set at creation, changed and cleared by PATCH, refused when wrong. */
for (const backend of backends()) {
  describe(`a key's limits through the admin API (${backend})`, () => {
    const clock = manualClock(NOW);
    let server: TestServer;
    let accountId: string;

    before(async () => {
      server = await startTestServer(backend, { clock });
      ({ accountId } = await server.createAccount('free', 100));
    });
    after(() => server.close());

    const create = (body: Record<string, unknown>, account = accountId) =>
      server.request<Created>('POST', `/admin/accounts/${account}/keys`, { admin: true, body });
    const patch = (keyId: string, body: unknown) =>
      server.request<Key>('PATCH', `/admin/keys/${keyId}`, { admin: true, body });

    it('sets every field at creation, shows them in the listing, changes and clears each by PATCH', async () => {
      clock.set(NOW);
      const created = await create({
        name: 'checkout',
        budget: { credits: 50, period: 'total' },
        rate_limits: { rpm: 5, rpd: 50 },
        models: ['PV-TURBO'],
        expires_at: '2027-01-01T00:00:00Z',
        metadata: { team: 'web', env: 'prod' },
      });
      assert.equal(created.status, 201, created.text);
      const key = created.body.key;
      assert.deepEqual(
        { ...key, id: undefined, prefix: undefined, account_id: undefined },
        {
          id: undefined,
          prefix: undefined,
          account_id: undefined,
          name: 'checkout',
          user_id: null,
          created_at: new Date(NOW).toISOString(),
          last_used_at: null,
          revoked_at: null,
          budget: { credits: 50, period: 'total' },
          spend: { credits: 0, period_start: '1970-01-01T00:00:00.000Z' },
          rate_limits: { rpm: 5, rpd: 50 },
          models: ['PV-TURBO'],
          expires_at: '2027-01-01T00:00:00.000Z',
          metadata: { team: 'web', env: 'prod' },
        },
      );
      const listed = await server.request<{ data: Key[] }>('GET', `/admin/accounts/${accountId}/keys`, { admin: true });
      assert.deepEqual(
        listed.body.data.find((k) => k.id === key.id),
        key,
      );

      const changed = await patch(key.id, {
        name: 'checkout-v2',
        budget: { credits: 80 },
        rate_limits: { rpm: 3 },
        models: ['PV-TURBO', 'PV-STANDARD'],
        metadata: { team: 'mobile' },
      });
      assert.equal(changed.status, 200, changed.text);
      assert.equal(changed.body.name, 'checkout-v2');
      assert.deepEqual(changed.body.budget, { credits: 80, period: 'total' }, 'merged: the period is kept');
      assert.deepEqual(changed.body.spend, { credits: 0, period_start: '1970-01-01T00:00:00.000Z' });
      assert.deepEqual(changed.body.rate_limits, { rpm: 3, rpd: 50 }, 'merged: rpd is kept');
      assert.deepEqual(changed.body.models, ['PV-TURBO', 'PV-STANDARD']);
      assert.equal(changed.body.expires_at, '2027-01-01T00:00:00.000Z', 'absent: unchanged');
      assert.deepEqual(changed.body.metadata, { team: 'mobile' }, 'metadata is replaced whole');
      const monthly = await patch(key.id, { budget: { period: 'month' } });
      assert.deepEqual(monthly.body.budget, { credits: 80, period: 'month' });
      assert.deepEqual(monthly.body.spend, { credits: 0, period_start: '2026-11-01T00:00:00.000Z' }, 'a new period');

      const cleared = await patch(key.id, {
        name: null,
        budget: null,
        rate_limits: null,
        models: null,
        expires_at: null,
        metadata: null,
      });
      assert.equal(cleared.status, 200);
      for (const field of ['name', 'budget', 'rate_limits', 'models', 'expires_at', 'metadata']) {
        assert.equal(cleared.body[field], null, field);
      }
      assert.equal((await patch('key_nope', { name: 'x' })).status, 404);
    });

    it('refuses a rate limit above the tier, naming the field and the tier limit', async () => {
      const res = await create({ rate_limits: { rpm: 11 } });
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, {
        status: 'error',
        code: 'INVALID_PARAMETER',
        message: "rate_limits.rpm is at most the free tier's 10",
        details: { field: 'rate_limits.rpm', reason: "rate_limits.rpm is at most the free tier's 10", max: 10 },
        error: {
          message: "rate_limits.rpm is at most the free tier's 10",
          type: 'invalid_request_error',
          code: 'invalid_parameter',
          param: 'rate_limits.rpm',
        },
      });
      const key = (await create({})).body.key;
      const patched = await patch(key.id, { rate_limits: { rpd: 101 } });
      assert.equal(patched.status, 400);
      assert.equal(patched.body.message, "rate_limits.rpd is at most the free tier's 100");
    });

    it('answers a change to a revoked key with 404, saying when it was revoked', async () => {
      clock.set(NOW);
      const made = await create({ name: 'gone' });
      const keyId = made.body.key.id;
      assert.equal((await server.request('DELETE', `/admin/keys/${keyId}`, { admin: true })).status, 200);
      const changed = await patch(keyId, { name: 'back' });
      assert.equal(changed.status, 404);
      assert.equal(changed.body.code, 'NOT_FOUND');
      assert.match(String(changed.body.message), /was revoked at 2026-11-21T12:00:00\.000Z/);
      const listed = await server.request<{ data: Key[] }>('GET', `/admin/accounts/${accountId}/keys`, { admin: true });
      assert.equal(listed.body.data.find((k) => k.id === keyId)?.name, 'gone', 'nothing was changed');
    });

    it('refuses an expiry in the past, too many metadata pairs and an unknown model', async () => {
      clock.set(NOW);
      const past = await create({ expires_at: '2026-11-21T11:00:00Z' });
      assert.equal(past.status, 400);
      assert.equal(past.body.code, 'INVALID_PARAMETER');
      assert.equal(past.body.message, 'expires_at 2026-11-21T11:00:00.000Z is not in the future');
      assert.equal((past.body.details as { field: string }).field, 'expires_at');

      const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
      const metadata = await create({ metadata: many });
      assert.equal(metadata.status, 400);
      assert.equal(metadata.body.code, 'INVALID_PARAMETER');
      assert.match(String(metadata.body.message), /metadata/);

      const longKey = await create({ metadata: { ['k'.repeat(65)]: 'v' } });
      assert.equal(longKey.status, 400);
      assert.match(String(longKey.body.message), /metadata keys are 1 to 64 characters/);
      const emptyKey = await create({ metadata: { '': 'v' } });
      assert.equal(emptyKey.status, 400);
      assert.equal((emptyKey.body.details as { field: string }).field, 'metadata');
      // Characters are code points, as the contract's maxLength counts them: 64 emoji are a key of 64.
      const astral = await create({ name: '😀'.repeat(128), metadata: { ['😀'.repeat(64)]: '😀'.repeat(512) } });
      assert.equal(astral.status, 201, JSON.stringify(astral.body));
      const over = await create({ metadata: { k: '😀'.repeat(513) } });
      assert.equal(over.status, 400);

      const model = await create({ models: ['gpt-5'] });
      assert.equal(model.status, 400);
      assert.equal(model.body.code, 'INVALID_PARAMETER');
    });

    it("counts the key's own RPM beside the account's: headers of the closer one, the refusal the key's", async () => {
      clock.set(NOW + 3_600_000);
      const { body } = await create({ name: 'slow', rate_limits: { rpm: 2 } });
      const apiKey = body.api_key;
      const first = await server.request('GET', '/z1/models', { apiKey });
      assert.equal(first.status, 200);
      assert.equal(first.headers.get('x-ratelimit-limit'), '2', "the key's limit is closer to biting");
      assert.equal(first.headers.get('x-ratelimit-remaining'), '1');
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      const refused = await server.request('GET', '/z1/models', { apiKey });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'RATE_LIMIT_EXCEEDED');
      assert.equal(refused.body.message, 'Rate limit exceeded: 2 requests per minute of the key slow');
      assert.deepEqual(refused.body.details, {
        window: 'minute',
        limit: 2,
        reset: (NOW + 3_660_000) / 1000,
        scope: 'key',
      });
      assert.equal(refused.headers.get('x-ratelimit-limit'), '2');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(refused.headers.get('retry-after'), '60');
      // The account's own key (no limits of its own) is still admitted: the account's window has room.
      const other = await create({});
      const res = await server.request('GET', '/z1/models', { apiKey: other.body.api_key });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-limit'), '10');
    });

    it('refuses a model outside the key allow-list with 403 naming the allowed ones, on chat, responses, embeddings', async () => {
      clock.set(NOW + 7_200_000);
      const { accountId: other } = await server.createAccount('business', 100);
      const { body } = await create({ name: 'turbo-only', models: ['PV-TURBO'] }, other);
      const apiKey = body.api_key;
      const chat = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: chatBody({ model: 'PV-STANDARD' }),
      });
      assert.equal(chat.status, 403);
      const message = `Key "turbo-only" (${body.key.id}) may call PV-TURBO only, not PV-STANDARD`;
      assert.deepEqual(chat.body, {
        status: 'error',
        code: 'MODEL_NOT_ALLOWED_FOR_KEY',
        message,
        details: { model: 'PV-STANDARD', key_id: body.key.id, allowed: ['PV-TURBO'] },
        error: { message, type: 'permission_error', code: 'model_not_allowed_for_key', param: null },
      });
      const response = await server.request('POST', '/z1/responses', {
        apiKey,
        body: { model: 'PV-CODEX', input: 'hi' },
      });
      assert.equal(response.status, 403);
      assert.equal(response.body.code, 'MODEL_NOT_ALLOWED_FOR_KEY');
      const embedding = await server.request('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-EMBED', input: 'hi' },
      });
      assert.equal(embedding.status, 403);
      assert.equal(embedding.body.code, 'MODEL_NOT_ALLOWED_FOR_KEY');
    });

    it('refuses a key past its expiry with 401 API_KEY_EXPIRED saying when', async () => {
      clock.set(NOW);
      const { body } = await create({ expires_at: '2026-11-21T13:00:00Z' });
      const apiKey = body.api_key;
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      clock.set(Date.UTC(2026, 10, 21, 13, 0, 0));
      const res = await server.request('GET', '/z1/models', { apiKey });
      assert.equal(res.status, 401);
      const message = `The API key ${body.key.id} expired at 2026-11-21T13:00:00.000Z; create or rotate a key`;
      assert.deepEqual(res.body, {
        status: 'error',
        code: 'API_KEY_EXPIRED',
        message,
        details: { key_id: body.key.id, expired_at: '2026-11-21T13:00:00.000Z' },
        error: { message, type: 'authentication_error', code: 'api_key_expired', param: null },
      });
    });
  });
}
