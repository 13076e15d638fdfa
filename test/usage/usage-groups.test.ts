import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UsageRecord } from '../../src/usage/index.js';
import { backends } from '../support/databases.js';
import { manualClock, startTestServer, type TestServer } from '../support/server.js';

interface SeriesItem {
  key: string | null;
  key_name?: string | null;
  key_prefix?: string | null;
  requests: number;
  credits: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
interface UsageBody {
  totals: Omit<SeriesItem, 'key'>;
  series: SeriesItem[];
  has_more: boolean;
}

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 9, 1);
type Group = 'day' | 'model' | 'key' | 'user';

/** RFC 4180 text back to its rows of fields: the reverse of the server's quoting, for the parse-back. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    const pair = text.slice(i, i + 2);
    if (quoted && pair === '""') {
      field += '"';
      i += 2;
      continue;
    }
    if (c === '"') quoted = !quoted;
    else if (quoted) field += c;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (pair === '\r\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 1;
    } else field += c;
    i += 1;
  }
  assert.equal(field, '', 'every row ends with CRLF');
  return rows;
}

for (const backend of backends()) {
  describe(`usage by key, end user, model and day, paged and as CSV (${backend})`, () => {
    const clock = manualClock(T0 + 70 * DAY);
    let server: TestServer;
    let accountId: string;
    let apiKey: string;
    const keyIds: string[] = [];
    const rows: UsageRecord[] = [];

    /** The naive sums of the seeded rows in [start, end) by `group`, the group of none as null. */
    function expected(start: number, end: number, group: Group) {
      const sums = new Map<string | null, SeriesItem>();
      for (const r of rows) {
        if (r.createdAt < start || r.createdAt >= end) continue;
        const key =
          group === 'day'
            ? new Date(r.createdAt - (r.createdAt % DAY)).toISOString().slice(0, 10)
            : group === 'model'
              ? r.model
              : group === 'key'
                ? r.keyId
                : (r.userId ?? null);
        const s = sums.get(key) ?? {
          key,
          requests: 0,
          credits: 0,
          prompt_tokens: 0,
          completion_tokens: 0,
          total_tokens: 0,
        };
        s.requests += 1;
        s.credits += r.credits;
        s.prompt_tokens += r.promptTokens;
        s.completion_tokens += r.completionTokens;
        s.total_tokens += r.promptTokens + r.completionTokens;
        sums.set(key, s);
      }
      const named = [...sums.values()].filter((s) => s.key !== null);
      return [
        ...named.sort((a, b) => ((a.key as string) < (b.key as string) ? -1 : 1)),
        ...(sums.has(null) ? [sums.get(null)] : []),
      ];
    }

    /** Every page of a series, `limit` at a time, following `after`. */
    async function allPages(query: string, limit: number, key = apiKey) {
      const items: SeriesItem[] = [];
      let cursor: string | null | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const afterPart = cursor ? `&after=${encodeURIComponent(cursor)}` : '';
        const res = await server.request<UsageBody>('GET', `/z1/usage?${query}&limit=${limit}${afterPart}`, {
          apiKey: key,
        });
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.series.length <= limit);
        items.push(...res.body.series);
        if (!res.body.has_more) return { items, totals: res.body.totals };
        cursor = res.body.series.at(-1)?.key;
        assert.ok(cursor, 'a page followed by another ends with a named group');
      }
      throw new Error('more than 100 pages');
    }

    before(async () => {
      server = await startTestServer(backend, { clock });
      ({ accountId, apiKey } = await server.createAccount('enterprise', 1000));
      const [firstKey] = (
        await server.request<{ data: Array<{ id: string }> }>('GET', `/admin/accounts/${accountId}/keys`, {
          admin: true,
        })
      ).body.data;
      keyIds.push(firstKey?.id ?? '');
      for (const name of ['Shop, "web"', 'mobile']) {
        const res = await server.request<{ key: { id: string } }>('POST', `/admin/accounts/${accountId}/keys`, {
          admin: true,
          body: { name },
        });
        keyIds.push(res.body.key.id);
      }
      // 60 days of rows: 3 keys, 7 end users (a comma, a quote and a space in some ids) and none, 3 models and none.
      const users = ['ann', 'bob', 'c,d', 'e"f', ' g', 'h i', 'zed', null];
      const models = ['PV-TURBO', 'PV-CODEX', 'PV-ADVANCED', null];
      for (let i = 0; i < 240; i++) {
        rows.push({
          accountId,
          keyId: keyIds[i % 3] ?? null,
          requestId: `req_seed_${i}`,
          endpoint: 'createChatCompletion',
          model: models[i % 4] ?? null,
          userId: users[i % 8] ?? null,
          status: 200,
          promptTokens: i % 13,
          completionTokens: i % 7,
          credits: i % 5,
          latencyMs: 10,
          cached: false,
          createdAt: T0 + i * (DAY / 4) + (i % 3) * 1000,
        });
      }
      for (const r of rows) await server.running.runtime.usage.record(r);
    });
    after(() => server.close());

    for (const group of ['day', 'model', 'key', 'user'] as const) {
      it(`group_by=${group}: the range's groups, every page once, the CSV the same rows`, async () => {
        const [start, end] = [T0 + 5 * DAY + 3_600_000 + 17, T0 + 50 * DAY];
        const range = `start=${new Date(start).toISOString()}&end=${new Date(end).toISOString()}&group_by=${group}`;
        const want = expected(start, end, group);
        assert.ok(want.length >= 3, 'several groups');
        const whole = await allPages(range, 1000);
        assert.deepEqual(
          whole.items.map(({ key_name: _n, key_prefix: _p, ...item }) => item),
          want,
        );
        const paged = await allPages(range, 2);
        assert.deepEqual(paged.items, whole.items, 'pages of 2 hold every group once, in order');
        assert.deepEqual(paged.totals, whole.totals, 'totals are the period, whatever the page');
        const sum = want.reduce((n, s) => n + (s?.requests ?? 0), 0);
        assert.equal(whole.totals.requests, sum);

        const csv = await server.request('GET', `/z1/usage?${range}&format=csv&limit=1`, { apiKey });
        assert.equal(csv.status, 200, csv.text);
        assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
        assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="pvai-usage-.*\.csv"$/);
        const [header, ...records] = parseCsv(csv.text);
        const numbers = new Set(['requests', 'credits', 'prompt_tokens', 'completion_tokens', 'total_tokens']);
        const back = records.map((r) =>
          Object.fromEntries(
            (header ?? []).map((h, i) => [h, numbers.has(h) ? Number(r[i]) : r[i] === '' ? null : r[i]]),
          ),
        );
        assert.deepEqual(back, whole.items, 'the CSV parses back to the JSON series (limit does not apply)');
      });
    }

    it('by key: each key with its name and prefix; requests over HTTP name their key and end user', async () => {
      const res = await server.request<UsageBody>('GET', `/z1/usage?start=2026-10-01&end=2026-11-30&group_by=key`, {
        apiKey,
      });
      assert.deepEqual(
        res.body.series.map((s) => [s.key, s.key_name]),
        keyIds
          .map((id, i) => [id, ['default', 'Shop, "web"', 'mobile'][i]])
          .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1)),
      );
      for (const s of res.body.series) assert.match(s.key_prefix ?? '', /^pv_sk_/);

      const { apiKey: fresh } = await server.createAccount('enterprise', 1000);
      await server.request('GET', '/z1/memory?user_id=live-user', { apiKey: fresh });
      await server.request('GET', '/z1/memory?user_id=live-user', { apiKey: fresh });
      await server.request('GET', '/z1/models', { apiKey: fresh });
      const byUser = await server.request<UsageBody>('GET', '/z1/usage?group_by=user', { apiKey: fresh });
      assert.deepEqual(
        byUser.body.series.map((s) => [s.key, s.requests]),
        [
          ['live-user', 2],
          [null, 1],
        ],
      );
    });

    it('gives format=csv without group_by by day, and refuses a limit out of range', async () => {
      // The seeded rows' period: these reads are requests too, and fall after it.
      const period = `start=${new Date(T0).toISOString()}&end=${new Date(T0 + 50 * DAY).toISOString()}`;
      const csv = await server.request('GET', `/z1/usage?${period}&format=csv`, { apiKey });
      assert.equal(csv.status, 200);
      const byDay = await server.request('GET', `/z1/usage?${period}&format=csv&group_by=day`, { apiKey });
      assert.equal(csv.text, byDay.text);
      assert.ok(csv.text.split('\r\n').length > 3, 'several days');
      assert.equal(csv.text.split('\r\n')[0], 'key,requests,credits,prompt_tokens,completion_tokens,total_tokens');
      const big = await server.request('GET', '/z1/usage?group_by=day&limit=1001', { apiKey });
      assert.equal(big.status, 400);
    });
  });
}
