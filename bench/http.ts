/**
 * npm run bench:http — what authentication, rate limiting, validation and usage recording add to a
 * request, on SQLite and on PostgreSQL, in one run. Target: ≤ 0.3 ms added at p50 on SQLite.
 *
 * Rows: the bare liveness endpoint (routing only) next to GET /z1/models with an API key (auth +
 * limits + validation + a usage row). Load is spread over many accounts, as real traffic is, so the
 * sliding-minute log of each account stays at realistic sizes.
 */
import { createBenchAccount, freshStorage, load, probeLatency, startBenchServer, table } from './lib.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = 32;
const ACCOUNTS = 1000;
const PROBES = 3000;
const CONFIG = {
  tiers: { enterprise: { rpm: 1_000_000, rpd: 100_000_000, monthly: 1_000_000_000 } },
  logLevel: 'warn',
};

async function createKeys(url: string): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    keys.push(await createBenchAccount(url, `bench${i}@example.com`, 1_000_000));
  }
  return keys;
}

async function benchBackend(name: string, postgresUrl?: string) {
  const storage = await freshStorage(postgresUrl);
  const server = await startBenchServer(storage.env, CONFIG);
  try {
    const keys = await createKeys(server.url);
    const auth = (i: number) => ({ headers: { Authorization: `Bearer ${keys[i % keys.length]}` } });
    const bareLatency = await probeLatency(`${server.url}/z1/health`, PROBES, () => ({}));
    const authLatency = await probeLatency(`${server.url}/z1/models`, PROBES, auth);
    const bareLoad = await load({ url: `${server.url}/z1/health`, connections: CONNECTIONS, seconds: SECONDS });
    const authLoad = await load({
      url: server.url,
      connections: CONNECTIONS,
      seconds: SECONDS,
      requests: keys.map((key) => ({ method: 'GET', path: '/z1/models', headers: { Authorization: `Bearer ${key}` } })),
    });
    return [
      [
        `${name}: GET /z1/health (bare)`,
        bareLoad.rps,
        bareLoad.p50,
        bareLoad.p99,
        bareLatency.p50,
        bareLatency.p99,
        '-',
      ],
      [
        `${name}: GET /z1/models (auth+limits+usage)`,
        authLoad.rps,
        authLoad.p50,
        authLoad.p99,
        authLatency.p50,
        authLatency.p99,
        authLatency.p50 - bareLatency.p50,
      ],
      ...(bareLoad.non2xx + authLoad.non2xx + bareLoad.errors + authLoad.errors > 0
        ? [
            [
              `${name}: non-2xx ${bareLoad.non2xx + authLoad.non2xx}, errors ${bareLoad.errors + authLoad.errors}`,
              0,
              0,
              0,
              0,
              0,
              '-',
            ],
          ]
        : []),
    ];
  } finally {
    await server.stop();
    await storage.drop();
  }
}

const postgresUrl = process.env.DATABASE_URL ?? 'postgres://pvai:pvai@127.0.0.1:5432/pvai';
const rows = [...(await benchBackend('SQLite')), ...(await benchBackend('PostgreSQL', postgresUrl))];
console.log(
  `\npvai HTTP overhead — ${CONNECTIONS} connections × ${SECONDS} s (autocannon, whole-ms latencies); ` +
    `sequential probe of ${PROBES} requests on one connection (µs resolution)\n`,
);
console.log(
  table(
    ['request', 'req/s', 'p50 ms', 'p99 ms', 'probe p50 ms', 'probe p99 ms', 'added p50 ms'],
    rows as Array<Array<string | number>>,
  ),
);
