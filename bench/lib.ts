import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Agent, request } from 'undici';
import { createTestDatabase } from '../test/support/databases.js';

export const ROOT = join(import.meta.dirname, '..');
export const ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** An enterprise account made through the admin API; answers its API key. */
export async function createBenchAccount(url: string, email: string, credits = 1_000_000_000): Promise<string> {
  const res = await fetch(`${url}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, tier: 'enterprise', credits }),
  });
  if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { api_key: string }).api_key;
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  return typeof address === 'object' && address ? address.port : 0;
}

export interface BenchServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A fresh database for one run: a temp SQLite dir, or a new PostgreSQL database when `postgresUrl` is given. */
export async function freshStorage(
  postgresUrl?: string,
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  const database = await createTestDatabase(postgresUrl ? 'postgres' : 'sqlite', postgresUrl);
  // DATABASE_URL is always set, empty for SQLite (= unset), so one in the caller's environment cannot leak in.
  const env: Record<string, string> = { PVAI_DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl ?? '' };
  return { env, drop: database.drop };
}

let built = false;

/** The production artifact, as `npm start` runs it: tsc's output, not tsx's on-the-fly transpilation. */
function buildOnce(): string {
  if (!built) {
    execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    built = true;
  }
  return join(ROOT, 'dist/src/cli/pvai.js');
}

/** `pvai serve` from the built output, in its own process (so the load generator does not share its event loop). */
export async function startBenchServer(
  env: Record<string, string>,
  config: object = {},
  /** Node arguments before the entry point (bench/probe.ts's preload). */
  nodeArgs: string[] = [],
  /** The CLI to run: this tree's build by default, another build's for bench:ab. */
  entry: string = buildOnce(),
): Promise<BenchServer> {
  const port = await freePort();
  const configFile = join(mkdtempSync(join(tmpdir(), 'pvai-bench-config-')), 'pvai.json');
  writeFileSync(configFile, JSON.stringify(config));
  const child = spawn(process.execPath, [...nodeArgs, entry, 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PVAI_HOST: '127.0.0.1',
      PVAI_PORT: String(port),
      PVAI_ADMIN_TOKEN: ADMIN_TOKEN,
      PVAI_LOG_LEVEL: 'warn',
      PVAI_CONFIG: configFile,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealthy(url, child);
  return {
    url,
    child,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}

export async function waitForHealthy(url: string, child?: ChildProcess, path = '/z1/health'): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(url + path);
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not healthy after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface LoadResult {
  rps: number;
  /** Requests answered in the measured window. */
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Throughput at a fixed number of connections (autocannon; latencies in whole ms). */
export async function load(opts: {
  url: string;
  connections: number;
  seconds: number;
  requests?: autocannon.Request[];
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  overallRate?: number;
  /**
   * Seconds of the same load first, not measured: JIT, connection pools and per-account state warm up
   * (a first 6 s round of pvai's chat path ran at 1,788 req/s, the next at 2,862).
   */
  warmupSeconds?: number;
}): Promise<LoadResult> {
  if (opts.warmupSeconds) await load({ ...opts, seconds: opts.warmupSeconds, warmupSeconds: 0 });
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.seconds,
    ...(opts.requests ? { requests: opts.requests } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    ...(opts.method ? { method: opts.method } : {}),
    ...(opts.body ? { body: opts.body } : {}),
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
  return {
    rps: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export interface LatencyResult {
  p50: number;
  p99: number;
  mean: number;
}

/** The value at fraction `p` of an ascending list (0 for none). */
export const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/**
 * Microsecond-resolution latency of sequential requests on one kept-alive connection, so a
 * fraction of a millisecond added by the service is visible (autocannon rounds to whole ms).
 */
export async function probeLatency(
  url: string,
  count: number,
  makeRequest: (i: number) => { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
): Promise<LatencyResult> {
  const dispatcher = new Agent({ connections: 1, pipelining: 1 });
  const samples: number[] = [];
  try {
    for (let i = 0; i < count + 200; i++) {
      const r = makeRequest(i);
      const start = process.hrtime.bigint();
      const res = await request(url, {
        dispatcher,
        method: r.method ?? 'GET',
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.body ? { body: r.body } : {}),
      });
      await res.body.arrayBuffer();
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (res.statusCode >= 500 && res.statusCode !== 503) throw new Error(`${url} answered ${res.statusCode}`);
      if (i >= 200) samples.push(ms); // the first 200 warm the JIT and the connection
    }
  } finally {
    await dispatcher.close();
  }
  samples.sort((a, b) => a - b);
  return {
    p50: percentile(samples, 0.5),
    p99: percentile(samples, 0.99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** The middle value (the upper of the two middles for an even count); 0 for none. */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export function table(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? formatNumber(c) : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  const line = (r: Array<string | number>) => `| ${r.map((c, i) => String(c).padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [
    line(cells[0] ?? []),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}

function formatNumber(n: number): string {
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(3);
}

/**
 * Share of CPU time the hypervisor gave to other guests ("steal", from /proc/stat) between the call and
 * the returned function's call. On a shared VM this is the noise under every figure: at 50 % steal
 * the same code runs at half speed and its tail latencies grow by whole time slices.
 */
export function cpuStealMeter(): () => number | undefined {
  const read = () => {
    try {
      const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]?.trim().split(/\s+/).slice(1).map(Number);
      return fields && fields.length >= 8
        ? { steal: fields[7] ?? 0, total: fields.reduce((a, b) => a + b, 0) }
        : undefined;
    } catch {
      return undefined; // not Linux
    }
  };
  const start = read();
  return () => {
    const end = read();
    if (!start || !end || end.total === start.total) return undefined;
    return (end.steal - start.steal) / (end.total - start.total);
  };
}
