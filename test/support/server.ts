import { pino } from 'pino';
import type { Clock } from '../../src/clock/clock.js';
import { loadConfig, type RawConfig } from '../../src/config/index.js';
import type { Tier } from '../../src/kernel/index.js';
import type { FactExtractor } from '../../src/memory/index.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { assertConformsToContract } from './contract.js';
import { type Backend, createMigratedTestDatabase } from './databases.js';
import { TINY_CHAT_MODEL } from './models.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
/** The real tiny llama every local-engine test uses: the committed fixture (test/fixtures/models). */
export const TEST_MODEL = TINY_CHAT_MODEL;

export interface Response<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
  apiKey?: string;
  /** 'bearer' (default) or 'header' (X-API-Key). */
  auth?: 'bearer' | 'header';
  admin?: boolean;
}

export interface TestServer {
  url: string;
  backend: Backend;
  running: RunningServer;
  databaseUrl?: string;
  dataDir: string;
  /** A request over real HTTP whose response is checked against the contract. */
  request<T = Record<string, unknown>>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>;
  createAccount(tier: Tier, credits?: number): Promise<{ accountId: string; apiKey: string }>;
  /** Rows of the usage table, after buffered usage rows are written. */
  usageRows<T>(sql: string, params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * What every test server runs on: loopback, a free port, the test admin token, no logs, the tiny model, on the
 * given data directory and (PostgreSQL) database; `extra` on top.
 */
export function testServerConfig(
  storage: { dataDir: string; databaseUrl?: string | undefined },
  extra: RawConfig = {},
) {
  return loadConfig(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      dataDir: storage.dataDir,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      localModel: TEST_MODEL,
      ...(storage.databaseUrl ? { databaseUrl: storage.databaseUrl } : {}),
      ...extra,
    },
  );
}

export interface TestServerOptions {
  clock?: Clock;
  memoryExtractor?: FactExtractor;
  config?: RawConfig;
}

export async function startTestServer(backend: Backend, options: TestServerOptions = {}): Promise<TestServer> {
  const database = await createMigratedTestDatabase(backend);
  const config = testServerConfig(database, options.config);
  const running = await startServer(config, {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.memoryExtractor ? { memoryExtractor: options.memoryExtractor } : {}),
    logger: pino({ level: 'silent' }),
  });
  const url = running.url;

  async function request<T>(method: string, path: string, o: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.apiKey) {
      if (o.auth === 'header') headers['X-API-Key'] = o.apiKey;
      else headers.Authorization = `Bearer ${o.apiKey}`;
    }
    if (o.admin) headers.Authorization = `Bearer ${ADMIN_TOKEN}`;
    let payload: string | undefined;
    if (o.rawBody !== undefined) payload = o.rawBody;
    else if (o.body !== undefined) payload = JSON.stringify(o.body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(url + path, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const text = await res.text();
    const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
    const body = (isJson && text ? JSON.parse(text) : text) as T;
    await assertConformsToContract(method, path, res.status, res.headers, body);
    return { status: res.status, headers: res.headers, body, text };
  }

  return {
    url,
    backend,
    running,
    dataDir: database.dataDir,
    ...(database.databaseUrl ? { databaseUrl: database.databaseUrl } : {}),
    request,
    async createAccount(tier, credits = 100) {
      const res = await request<{ account: { id: string }; api_key: string }>('POST', '/admin/accounts', {
        admin: true,
        body: { email: `${Math.random().toString(36).slice(2)}@example.com`, tier, credits },
      });
      if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${res.text}`);
      return { accountId: res.body.account.id, apiKey: res.body.api_key };
    },
    async usageRows<T>(sql: string, params: unknown[]) {
      await running.runtime.usage.flush();
      return running.runtime.db.query<T>(sql, params);
    },
    async close() {
      await running.close();
      await database.drop();
    },
  };
}

/**
 * Another server process's worth of pvai on the first one's database (PostgreSQL: replicas share state), in
 * this process: its own runtime, caches and limits, nothing shared in memory. `config` as for the first.
 */
export async function startReplica(first: TestServer, config: RawConfig = {}): Promise<RunningServer> {
  return startServer(testServerConfig(first, config), { logger: pino({ level: 'silent' }) });
}

/** A clock tests move by hand. */
export function manualClock(start: number): Clock & { set(ms: number): void; advance(ms: number): void } {
  let now = start;
  const clock = (() => now) as Clock & { set(ms: number): void; advance(ms: number): void };
  clock.set = (ms) => {
    now = ms;
  };
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}

/** A valid chat request; a small max_tokens keeps the local engine's answers quick. */
export const chatBody = (overrides: Record<string, unknown> = {}) => ({
  model: 'PV-TURBO',
  user_id: 'user-1',
  max_tokens: 8,
  messages: [{ role: 'user', content: 'Tell me a story.' }],
  ...overrides,
});
