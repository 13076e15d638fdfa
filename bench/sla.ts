/**
 * npm run bench:sla — server time of GET /z1/sla and GET /z1/usage for one account holding 1M usage rows
 * and a month of SLA buckets, on SQLite (and PostgreSQL when DATABASE_URL is set). Target: ≤ 50 ms each.
 *
 * The account's rows are written straight into the database between two starts of the server (as a
 * month of traffic would have left them): 1M usage rows over the last 30 days, and the SLA buckets
 * retention leaves (30 day, 72 hour and 360 minute buckets × 4 models), beside 100 other accounts with
 * the same buckets so the table is not the account's alone. Latency is measured over HTTP on one
 * kept-alive connection (auth, limits and validation included; they add ~0.1 ms, see bench:http).
 */

import { Agent, request } from 'undici';
import { type SlaBucket, SqlSlaStore } from '../src/sla/index.js';
import { openDb } from '../src/storage/index.js';
import { SqlUsageStore, type UsageRecord } from '../src/usage/index.js';
import { DashboardClient } from '../test/support/dashboard.js';
import { ADMIN_TOKEN, freshStorage, startBenchServer, table } from './lib.js';

const USAGE_ROWS = Number(process.env.BENCH_USAGE_ROWS ?? 1_000_000);
const OTHER_ACCOUNTS = 100;
const PROBES = Number(process.env.BENCH_PROBES ?? 40);
const WARMUP = 5;
const MODELS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'];
const DAY = 86_400_000;
const CONFIG = {
  tiers: { enterprise: { rpm: 1_000_000, rpd: 100_000_000, monthly: 1_000_000_000 } },
  logLevel: 'warn',
};

function slaBuckets(accountId: string, now: number): SlaBucket[] {
  const out: SlaBucket[] = [];
  const shapes = [
    { resolution: 'day', size: DAY, count: 30 },
    { resolution: 'hour', size: 3_600_000, count: 72 },
    { resolution: 'minute', size: 60_000, count: 360 },
  ] as const;
  for (const { resolution, size, count } of shapes) {
    const last = now - (now % size);
    for (let i = 0; i < count; i++) {
      for (const model of MODELS) {
        const latency = new Array<number>(14).fill(0);
        latency[5] = 90;
        latency[6] = 9;
        latency[8] = 1;
        out.push({
          accountId,
          resolution,
          bucketStart: last - i * size,
          endpoint: 'createChatCompletion',
          model,
          requests: 100,
          errors: 1,
          upstreamErrors: 1,
          timeouts: 0,
          latencySumMs: 40_000,
          latency,
          ttftCount: 100,
          ttftSumMs: 5_000,
          ttft: latency.map((n, k) => (k === 3 ? 100 : 0 * n)),
        });
      }
    }
  }
  return out;
}

/** Sequential requests on one kept-alive connection after a short warm-up: p50, p99 (the slowest here) and mean ms. */
const PASSWORD = 'bench-password-123';

async function probe(url: string, headers: Record<string, string>) {
  const dispatcher = new Agent({ connections: 1 });
  const samples: number[] = [];
  try {
    for (let i = 0; i < WARMUP + PROBES; i++) {
      const start = process.hrtime.bigint();
      const res = await request(url, { dispatcher, headers });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
      if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  } finally {
    await dispatcher.close();
  }
  samples.sort((a, b) => a - b);
  const at = (p: number) => samples[Math.min(samples.length - 1, Math.floor(samples.length * p))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length };
}

/** What GET /z1/usage cost before the daily rollup: one aggregate over the period's rows, timed in the database. */
async function rawAggregateMs(env: Record<string, string>, accountId: string, start: number, end: number) {
  const db = await openDb({
    dataDir: env.PVAI_DATA_DIR ?? './data',
    owner: true,
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  });
  try {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await db.query(
        `SELECT count(*) AS requests, coalesce(sum(credits), 0) AS credits, coalesce(sum(prompt_tokens), 0) AS p,
           coalesce(sum(completion_tokens), 0) AS c FROM usage_records
          WHERE account_id = $1 AND created_at >= $2 AND created_at < $3`,
        [accountId, start, end],
      );
      times.push(performance.now() - t);
    }
    return times.sort((a, b) => a - b)[2] ?? 0;
  } finally {
    await db.close();
  }
}

async function seed(env: Record<string, string>, accountId: string, now: number): Promise<void> {
  const db = await openDb({
    dataDir: env.PVAI_DATA_DIR ?? './data',
    owner: true,
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
  });
  try {
    const usage = new SqlUsageStore(db);
    const batch = 10_000;
    for (let done = 0; done < USAGE_ROWS; done += batch) {
      const rows: UsageRecord[] = [];
      for (let i = done; i < Math.min(USAGE_ROWS, done + batch); i++) {
        rows.push({
          accountId,
          keyId: null,
          requestId: `req_bench_${i}`,
          endpoint: 'createChatCompletion',
          model: MODELS[i % MODELS.length] as string,
          status: 200,
          promptTokens: 12,
          completionTokens: 7,
          credits: 1,
          latencyMs: 400,
          cached: false,
          createdAt: now - 30 * DAY + Math.floor((i * 30 * DAY) / USAGE_ROWS),
        });
      }
      await usage.recordMany(rows);
    }
    const sla = new SqlSlaStore(db);
    await sla.add(slaBuckets(accountId, now));
    for (let a = 0; a < OTHER_ACCOUNTS; a++) await sla.add(slaBuckets(`acct_other_${a}`, now));
  } finally {
    await db.close();
  }
}

async function benchBackend(name: string, postgresUrl?: string) {
  const storage = await freshStorage(postgresUrl);
  try {
    let server = await startBenchServer(storage.env, CONFIG);
    const res = await fetch(`${server.url}/admin/accounts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        email: 'bench-sla@example.com',
        tier: 'enterprise',
        credits: 1_000_000,
        password: PASSWORD,
      }),
    });
    const created = (await res.json()) as { account: { id: string }; api_key: string };
    await server.stop();
    const now = Date.now();
    const seedStart = performance.now();
    await seed(storage.env, created.account.id, now);
    console.error(`${name}: seeded ${USAGE_ROWS} usage rows in ${Math.round(performance.now() - seedStart)} ms`);
    const raw = await rawAggregateMs(storage.env, created.account.id, now - 30 * DAY, now + 1);
    server = await startBenchServer(storage.env, CONFIG);
    try {
      const headers = { Authorization: `Bearer ${created.api_key}` };
      const start = new Date(now - 30 * DAY).toISOString();
      const paths = [
        '/z1/sla?window=1h',
        '/z1/sla?window=24h',
        '/z1/sla?window=30d',
        `/z1/usage?start=${start}`,
        `/z1/usage?start=${start}&group_by=day`,
        `/z1/usage?start=${start}&group_by=model`,
      ];
      const rows: Array<Array<string | number>> = [];
      for (const path of paths) {
        const latency = await probe(`${server.url}${path}`, headers);
        rows.push([`${name}: GET ${path.replace(start, '<30 days ago>')}`, latency.p50, latency.p99, latency.mean]);
      }
      // The dashboard's pages for the same account, signed in: the whole server time of each HTML page.
      const browser = new DashboardClient(server.url);
      await browser.signIn('bench-sla@example.com', PASSWORD);
      const cookie = { Cookie: `pvai_session=${browser.cookies.get('pvai_session') ?? ''}` };
      for (const path of ['/dashboard/usage', '/dashboard/sla?window=24h', '/dashboard/sla?window=30d']) {
        const latency = await probe(`${server.url}${path}`, cookie);
        rows.push([`${name}: GET ${path} (page)`, latency.p50, latency.p99, latency.mean]);
      }
      rows.push([
        `${name}: the raw-row aggregate /z1/usage ran before the rollup (median of 5, in the db)`,
        raw,
        '-',
        '-',
      ]);
      return rows;
    } finally {
      await server.stop();
    }
  } finally {
    await storage.drop();
  }
}

const rows = await benchBackend('SQLite');
if (process.env.DATABASE_URL) rows.push(...(await benchBackend('PostgreSQL', process.env.DATABASE_URL)));
console.log(table(['request', 'p50 ms', 'p99 ms', 'mean ms'], rows));
