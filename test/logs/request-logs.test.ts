import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { manualClock, startTestServer, type TestServer } from '../support/server.js';

interface Log {
  id: string;
  request_id: string;
  created_at: string;
  key: { id: string; prefix: string | null; name: string | null } | null;
  user_id: string | null;
  endpoint: string;
  model: string | null;
  status: number;
  failed_status: number | null;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
  latency_ms: number;
  cached: boolean;
  content: { input: string | null; output: string | null; truncated: boolean } | null;
}
interface LogList {
  data: Log[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const START = Date.UTC(2026, 10, 2, 9, 0, 0);
const DAY = 86_400_000;

/**
 * Request logs over real HTTP, on SQLite and PostgreSQL: a row per request with its key, end user, model, status,
 * tokens, credits, latency, cache hit and error code, and no text unless the account keeps it; newest first,
 * filtered and keyset-paged; the account's own only (a key bound to an end user: that user's only); swept past the
 * retention.
 */
for (const backend of backends()) {
  describe(`request logs (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let accountId: string;
    let apiKey: string;
    let other: { accountId: string; apiKey: string };
    const clock = manualClock(START);
    const tick = () => clock.advance(1000);
    const ids = { chat: '', embeddings: '', refused: '', broken: '', other: '' };

    const chat = (key: string, user: string, content: string, extra: Record<string, unknown> = {}) => {
      tick();
      return server.request<{ choices: unknown[] }>('POST', '/z1/chat/completions', {
        apiKey: key,
        body: { model: 'PV-TURBO', user_id: user, max_tokens: 16, messages: [{ role: 'user', content }], ...extra },
      });
    };
    const logs = (key: string, query = '') => server.request<LogList>('GET', `/z1/logs${query}`, { apiKey: key });

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'The secret answer is 42.' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      server = await startTestServer(backend, {
        clock,
        config: {
          embeddingModel: EMBEDDING_MODEL,
          // Room for the test of reads under traffic: the free tier's 3,000 a month would end it on a fast machine.
          tiers: { free: { rpm: 10_000, rpd: 100_000, monthly: 100_000 } },
          routing: { 'PV-TURBO': [target] },
          logs: { retentionDays: 30 },
        },
      });
      ({ accountId, apiKey } = await server.createAccount('free', 1000));
      other = await server.createAccount('free', 1000);

      const first = await chat(apiKey, 'ada', 'My password is hunter2.');
      assert.equal(first.status, 200, first.text);
      ids.chat = first.headers.get('x-request-id') as string;
      tick();
      const embedded = await server.request('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-EMBED', input: 'a private sentence', user: 'bob' },
      });
      assert.equal(embedded.status, 200, embedded.text);
      ids.embeddings = embedded.headers.get('x-request-id') as string;
      tick();
      const refused = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: { model: 'PV-ADVANCED', user_id: 'ada', messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(refused.status, 403, refused.text);
      ids.refused = refused.headers.get('x-request-id') as string;
      tick();
      upstream.script({ kind: 'disconnect', afterChunks: 1 });
      const broken = await chat(apiKey, 'ada', 'Stream this.', { stream: true });
      assert.equal(broken.status, 200);
      ids.broken = broken.headers.get('x-request-id') as string;
      const otherChat = await chat(other.apiKey, 'ada', 'Another account.');
      assert.equal(otherChat.status, 200);
      ids.other = otherChat.headers.get('x-request-id') as string;
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });

    it('keeps a row per request with its key, end user, model, status, tokens, credits and error code, no text', async () => {
      const res = await logs(apiKey);
      assert.equal(res.status, 200, res.text);
      const byRequest = new Map(res.body.data.map((l) => [l.request_id, l]));
      const chatLog = byRequest.get(ids.chat);
      assert.ok(chatLog, `the chat's log among ${res.text}`);
      assert.equal(chatLog.endpoint, 'createChatCompletion');
      assert.equal(chatLog.model, 'PV-TURBO');
      assert.equal(chatLog.user_id, 'ada');
      assert.equal(chatLog.status, 200);
      assert.equal(chatLog.error_code, null);
      assert.equal(chatLog.failed_status, null);
      assert.ok(chatLog.prompt_tokens > 0 && chatLog.completion_tokens > 0, res.text);
      assert.ok(chatLog.credits > 0);
      assert.equal(chatLog.cached, false);
      assert.equal(chatLog.created_at, new Date(START + 1000).toISOString());
      assert.ok(chatLog.key?.id.startsWith('key_'), 'the key by id');
      assert.ok(chatLog.key?.prefix && apiKey.startsWith(chatLog.key.prefix), 'and by its prefix');
      assert.equal(chatLog.content, null, 'no text by default');

      const embedLog = byRequest.get(ids.embeddings);
      assert.equal(embedLog?.endpoint, 'createEmbedding');
      assert.equal(embedLog?.user_id, 'bob');
      assert.equal(embedLog?.status, 200);

      const refused = byRequest.get(ids.refused);
      assert.equal(refused?.status, 403);
      assert.equal(refused?.error_code, 'MODEL_NOT_ALLOWED');

      const broken = await eventually(
        () => server.request<Log>('GET', `/z1/logs/${ids.broken}`, { apiKey }),
        (r) => r.status === 200 && r.body.failed_status !== null,
      );
      assert.equal(broken.body.status, 200, 'the stream began with 200');
      assert.equal(broken.body.failed_status, 502, broken.text);
      assert.ok(broken.body.error_code, 'and the code of the error that ended it');

      assert.ok(!res.text.includes('hunter2') && !res.text.includes('secret answer'), 'never the text by default');
      assert.equal(byRequest.has(ids.other), false, "another account's requests are not here");
    });

    it('lists newest first, keyset-paged, and filters by key, user, status, errors, model and time', async () => {
      // The listings are requests too, logged at the clock's now: `end` leaves them out.
      clock.advance(1000);
      const end = `&end=${new Date(clock()).toISOString()}`;
      const all = (await logs(apiKey, `?limit=100${end}`)).body.data;
      const times = all.map((l) => Date.parse(l.created_at));
      assert.deepEqual(
        times,
        [...times].sort((a, b) => b - a),
        'newest first',
      );

      const seen: string[] = [];
      let cursor = '';
      for (let page = 0; page < 20; page++) {
        const res = await logs(apiKey, `?limit=2${end}${cursor}`);
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.data.length <= 2);
        seen.push(...res.body.data.map((l) => l.id));
        if (!res.body.has_more) break;
        cursor = `&after=${res.body.last_id}`;
      }
      assert.deepEqual(
        seen,
        all.map((l) => l.id),
        'the pages hold every row once, in order',
      );

      const only = async (query: string) => (await logs(apiKey, query + end)).body.data.map((l) => l.request_id);
      assert.deepEqual(await only('?user_id=bob'), [ids.embeddings]);
      assert.deepEqual(await only('?status=403'), [ids.refused]);
      assert.deepEqual((await only('?errors_only=true')).sort(), [ids.refused, ids.broken].sort());
      assert.deepEqual((await only('?model=PV-TURBO')).sort(), [ids.chat, ids.broken].sort());
      const chatAt = new Date(START + 1000).toISOString();
      const ranged = await logs(apiKey, `?start=${chatAt}&end=${new Date(START + 2000).toISOString()}`);
      assert.equal(ranged.status, 200, ranged.text.slice(0, 500));
      assert.deepEqual(
        (await logs(apiKey, `?start=${chatAt}&end=${new Date(START + 2000).toISOString()}`)).body.data.map(
          (l) => l.request_id,
        ),
        [ids.chat],
      );
      const keyId = all.find((l) => l.request_id === ids.chat)?.key?.id as string;
      assert.equal((await only(`?key_id=${keyId}`)).length, all.length, 'every request came through that key');
      assert.deepEqual(await only('?key_id=key_none'), []);

      for (const after of ['log_999999999', '0']) {
        const bad = await logs(apiKey, `?after=${after}`);
        assert.equal(bad.status, 404, after);
        assert.equal((bad.body as unknown as { code: string }).code, 'NOT_FOUND', after);
      }
      const otherLogs = (await logs(other.apiKey, '?limit=100')).body.data;
      const foreign = await logs(apiKey, `?after=${otherLogs[0]?.id}`);
      assert.equal(foreign.status, 404, "another account's row is no cursor");
    });

    it("gives one request's entry, and 404 for another account's", async () => {
      const mine = await server.request<Log>('GET', `/z1/logs/${ids.chat}`, { apiKey });
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.body.request_id, ids.chat);
      const theirs = await server.request('GET', `/z1/logs/${ids.other}`, { apiKey });
      assert.equal(theirs.status, 404);
    });

    it('answers reads while requests keep arriving (rows recorded meanwhile wait for the next write)', async () => {
      let arriving = true;
      let sent = 0;
      const traffic = (async () => {
        for (; arriving && sent < 4000; sent += 8) {
          await Promise.all(Array.from({ length: 8 }, () => server.request('GET', '/z1/models', { apiKey })));
        }
      })();
      try {
        for (let i = 0; i < 15; i++) {
          const [list, one] = await Promise.all([
            logs(apiKey, '?limit=5'),
            server.request('GET', `/z1/logs/${ids.chat}`, { apiKey }),
          ]);
          assert.equal(list.status, 200, list.text);
          assert.equal(one.status, 200, one.text);
        }
      } finally {
        arriving = false;
        await traffic;
      }
    });

    it('shows a key bound to an end user only that user', async () => {
      const created = await server.request<{ api_key: string }>('POST', `/admin/accounts/${accountId}/keys`, {
        admin: true,
        body: { name: 'bob-app', user_id: 'bob' },
      });
      assert.equal(created.status, 201, created.text);
      const bobKey = created.body.api_key;
      const res = await logs(bobKey, '?limit=100');
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.data.length > 0);
      assert.ok(
        res.body.data.every((l) => l.user_id === 'bob'),
        res.text,
      );
      assert.equal((await logs(bobKey, '?user_id=ada')).status, 403);
      assert.equal((await server.request('GET', `/z1/logs/${ids.chat}`, { apiKey: bobKey })).status, 404);
    });

    it('keeps the input and answer text once the account turns log_content on, bounded', async () => {
      const on = await server.request<{ log_content: boolean }>('PATCH', `/admin/accounts/${other.accountId}`, {
        admin: true,
        body: { log_content: true },
      });
      assert.equal(on.status, 200, on.text);
      assert.equal(on.body.log_content, true);
      // The key's principal is cached for up to authCacheTtlMs (1 s by default).
      const sent = await eventually(
        async () => {
          const r = await chat(other.apiKey, 'ada', 'Remember the code word: tangerine.');
          const id = r.headers.get('x-request-id') as string;
          return (await server.request<Log>('GET', `/z1/logs/${id}`, { apiKey: other.apiKey })).body;
        },
        (log) => log.content !== null,
        4000,
      );
      assert.ok(sent.content?.input?.includes('tangerine'), JSON.stringify(sent).slice(0, 500));
      assert.ok(sent.content?.output?.includes('The secret answer is 42.'), JSON.stringify(sent));
      assert.equal(sent.content?.truncated, false);

      const streamed = await chat(other.apiKey, 'ada', 'Stream the answer.', { stream: true });
      const streamedId = streamed.headers.get('x-request-id') as string;
      const log = await eventually(
        () => server.request<Log>('GET', `/z1/logs/${streamedId}`, { apiKey: other.apiKey }),
        (r) => r.status === 200,
      );
      assert.ok(log.body.content?.output?.includes('The secret answer is 42.'), log.text);

      const response = await server.request('POST', '/z1/responses', {
        apiKey: other.apiKey,
        body: { model: 'PV-TURBO', input: 'Say the word plum.', user: 'ada' },
      });
      assert.equal(response.status, 200, response.text.slice(0, 300));
      const responseLog = await server.request<Log>('GET', `/z1/logs/${response.headers.get('x-request-id')}`, {
        apiKey: other.apiKey,
      });
      assert.equal(responseLog.body.endpoint, 'createResponse');
      assert.ok(responseLog.body.content?.input?.includes('plum'), responseLog.text.slice(0, 500));
      assert.ok(responseLog.body.content?.output?.includes('The secret answer is 42.'), responseLog.text.slice(0, 500));

      const long = await chat(other.apiKey, 'ada', 'x'.repeat(40_000), { max_tokens: 4 });
      assert.equal(long.status, 200, long.text);
      const longLog = await server.request<Log>('GET', `/z1/logs/${long.headers.get('x-request-id')}`, {
        apiKey: other.apiKey,
      });
      assert.equal(longLog.body.content?.truncated, true);
      assert.equal(longLog.body.content?.input?.length, 32 * 1024);

      const off = await server.request('PATCH', `/admin/accounts/${other.accountId}`, {
        admin: true,
        body: { log_content: false },
      });
      assert.equal(off.status, 200);
      const mine = (await logs(apiKey, '?limit=100')).body.data;
      assert.ok(
        mine.every((l) => l.content === null),
        'an account that never turned it on has no text',
      );
    });

    it('deletes the rows older than the retention', async () => {
      const before = (await logs(apiKey, '?limit=100')).body.data.length;
      assert.ok(before > 0);
      clock.advance(31 * DAY);
      // The first request after the sweep is due starts it.
      const later = await chat(apiKey, 'ada', 'A month later.');
      assert.equal(later.status, 200);
      // Every row left is from now (the listings are logged too): the month-old ones are gone.
      const res = await eventually(
        () => logs(apiKey, '?limit=100'),
        (r) => r.body.data.every((l) => Date.parse(l.created_at) === clock()),
      );
      const left = res.body.data.map((l) => l.request_id);
      assert.ok(left.includes(later.headers.get('x-request-id') as string), res.text.slice(0, 500));
      assert.ok(!left.includes(ids.chat) && res.body.data.length < before, res.text.slice(0, 500));
      assert.equal((await server.request('GET', `/z1/logs/${ids.chat}`, { apiKey })).status, 404);
    });
  });
}
