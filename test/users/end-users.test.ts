import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { manualClock, startTestServer, type TestServer } from '../support/server.js';

interface EndUser {
  object: string;
  id: string;
  documents: number;
  memories: number;
  requests: number;
  last_seen_at: string;
}
interface EndUserList {
  data: EndUser[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const T0 = Date.UTC(2026, 10, 2, 8);
const MINUTE = 60_000;

for (const backend of backends()) {
  describe(`the list of end users (${backend})`, () => {
    const clock = manualClock(T0);
    let server: TestServer;
    let accountId: string;
    let apiKey: string;
    let otherKey: string;

    /** A request a minute after the last, so each one is seen later than the one before. */
    async function call<T = Record<string, unknown>>(method: string, path: string, key: string, body?: unknown) {
      clock.advance(MINUTE);
      const res = await server.request<T>(method, path, { apiKey: key, ...(body === undefined ? {} : { body }) });
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
      return res;
    }

    before(async () => {
      server = await startTestServer(backend, { clock });
      ({ accountId, apiKey } = await server.createAccount('enterprise', 10_000));
      ({ apiKey: otherKey } = await server.createAccount('enterprise', 10_000));
      // mem-user: 2 memories (2 requests); doc-user: 1 document (1 request); req-user: 3 requests only.
      await call('POST', '/z1/memory', apiKey, { user_id: 'mem-user', content: 'Likes tea.' });
      await call('POST', '/z1/memory', apiKey, { user_id: 'mem-user', content: 'Lives in Lyon.' });
      for (let i = 0; i < 3; i++) await call('GET', '/z1/memory?user_id=req-user', apiKey);
      await call('POST', '/z1/rag/documents', apiKey, {
        user_id: 'doc-user',
        title: 'Notes',
        content: 'Opening hours 9 to 5.',
      });
      // The same id in another account is another end user.
      await call('POST', '/z1/memory', otherKey, { user_id: 'mem-user', content: 'Elsewhere.' });
      await call('GET', '/z1/memory?user_id=stranger', otherKey);
    });
    after(() => server.close());

    it('lists each end user with their counts, most recently seen first, never another account’s', async () => {
      const res = await call<EndUserList>('GET', '/z1/users', apiKey);
      const at = (minutes: number) => new Date(T0 + minutes * MINUTE).toISOString();
      assert.deepEqual(res.body.data, [
        { object: 'end_user', id: 'doc-user', documents: 1, memories: 0, requests: 1, last_seen_at: at(6) },
        { object: 'end_user', id: 'req-user', documents: 0, memories: 0, requests: 3, last_seen_at: at(5) },
        { object: 'end_user', id: 'mem-user', documents: 0, memories: 2, requests: 2, last_seen_at: at(2) },
      ]);
      assert.equal(res.body.has_more, false);
      assert.deepEqual([res.body.first_id, res.body.last_id], ['doc-user', 'mem-user']);
      const other = await call<EndUserList>('GET', '/z1/users', otherKey);
      assert.deepEqual(
        other.body.data.map((u) => [u.id, u.memories, u.requests]),
        [
          ['stranger', 0, 1],
          ['mem-user', 1, 1],
        ],
      );
    });

    it('pages one at a time after the last id, every end user once; an unknown `after` is 404', async () => {
      const seen: string[] = [];
      let cursor = '';
      for (;;) {
        const res = await call<EndUserList>('GET', `/z1/users?limit=1${cursor}`, apiKey);
        seen.push(...res.body.data.map((u) => u.id));
        if (!res.body.has_more) break;
        cursor = `&after=${encodeURIComponent(res.body.last_id ?? '')}`;
      }
      assert.deepEqual(seen, ['doc-user', 'req-user', 'mem-user']);
      clock.advance(MINUTE);
      const unknown = await server.request('GET', '/z1/users?after=nobody', { apiKey });
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.code, 'NOT_FOUND');
    });

    it('a key bound to an end user lists that end user alone, and sees only their usage group', async () => {
      const made = await server.request<{ api_key: string }>('POST', `/admin/accounts/${accountId}/keys`, {
        admin: true,
        body: { name: 'req-user app', user_id: 'req-user' },
      });
      const bound = made.body.api_key;
      const res = await call<EndUserList>('GET', '/z1/users', bound);
      assert.deepEqual(
        res.body.data.map((u) => [u.id, u.requests]),
        [['req-user', 3]],
      );
      const usage = await call<{ series: Array<{ key: string | null }> }>('GET', '/z1/usage?group_by=user', bound);
      assert.deepEqual(
        usage.body.series.map((s) => s.key),
        ['req-user'],
      );
    });

    it('an erased end user is no longer listed, and their usage no longer names them', async () => {
      await call('DELETE', `/z1/users/req-user`, apiKey);
      const res = await call<EndUserList>('GET', '/z1/users', apiKey);
      assert.deepEqual(
        res.body.data.map((u) => u.id),
        ['doc-user', 'mem-user'],
      );
      const usage = await call<{ series: Array<{ key: string | null; requests: number }> }>(
        'GET',
        '/z1/usage?start=2026-11-01&group_by=user',
        apiKey,
      );
      assert.ok(!usage.body.series.some((s) => s.key === 'req-user'), JSON.stringify(usage.body.series));
      const none = usage.body.series.find((s) => s.key === null);
      assert.ok(none && none.requests >= 3, 'their 3 requests stay, in the group of no end user');
    });
  });
}
