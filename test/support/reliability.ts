import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Agent, request } from 'undici';
import { MODEL_IDS } from '../../src/kernel/index.js';
import { sqlitePath, toSqliteParams, toSqlitePlaceholders } from '../../src/storage/index.js';
import type { TestDatabase } from './databases.js';

export const ADMIN_TOKEN = 'reliability-admin-token-0123';

/**
 * The environment of a `pvai serve` child on `database` (embedded SQLite, or PostgreSQL when it has a
 * URL) whose PV models all route to `upstreamUrl`.
 */
export function serverEnv(
  database: TestDatabase,
  upstreamUrl: string,
  config: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Record<string, string> {
  const target = { provider: 'openai-compatible', baseUrl: upstreamUrl, model: 'mock-model', maxRetries: 0 };
  const file = join(mkdtempSync(join(tmpdir(), 'pvai-reliability-config-')), 'pvai.json');
  writeFileSync(
    file,
    JSON.stringify({ routing: Object.fromEntries(MODEL_IDS.map((m) => [m, [target]])), ...config }, null, 2),
  );
  return {
    PVAI_DATA_DIR: database.dataDir,
    PVAI_CONFIG: file,
    PVAI_ADMIN_TOKEN: ADMIN_TOKEN,
    // Emptied for SQLite: the suite may run with one set for the PostgreSQL backends.
    DATABASE_URL: database.databaseUrl ?? '',
    ...env,
  };
}

/** An account with `credits`, made through the admin API as an operator would. */
export async function createAccount(
  url: string,
  tier: string,
  credits: number,
): Promise<{ accountId: string; apiKey: string }> {
  const res = await fetch(`${url}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `${Math.random().toString(36).slice(2)}@example.com`, tier, credits }),
  });
  const body = (await res.json()) as { account: { id: string }; api_key: string };
  if (res.status !== 201) throw new Error(`account creation failed: ${res.status}`);
  return { accountId: body.account.id, apiKey: body.api_key };
}

/** Rows as stored, read with a connection of our own after the server stopped. */
export async function stored<T>(database: TestDatabase, sql: string, params: unknown[] = []): Promise<T[]> {
  if (database.databaseUrl) {
    const client = new pg.Client({ connectionString: database.databaseUrl });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const db = new Database(sqlitePath(database.dataDir), { readonly: true });
  try {
    return db.prepare(toSqlitePlaceholders(sql)).all(toSqliteParams(params)) as T[];
  } finally {
    db.close();
  }
}

/** Every account's balance as stored. */
export async function storedBalances(database: TestDatabase): Promise<Map<string, number>> {
  const rows = await stored<{ id: string; credits: number }>(database, 'SELECT id, credits FROM accounts');
  return new Map(rows.map((r) => [r.id, Number(r.credits)]));
}

export interface LoadTally {
  /** Requests sent. */
  sent: number;
  /** Requests whose whole response arrived, by status. */
  answered: Map<number, number>;
  /** Credits the answered responses said they charged (X-Credits-Charged). */
  chargedCredits: number;
  /** Requests that got no response: the connection died under them (they were in flight). */
  unanswered: number;
  /** Requests refused a connection (the server was gone before they reached it). */
  refused: number;
}

export interface LoadOptions {
  origin: string;
  connections: number;
  /** One request; `i` counts the requests of this load. */
  makeRequest(i: number): { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string };
  /** Keep sending until this says stop (checked before each request). */
  stop(tally: LoadTally): boolean;
  /** Counts into this one (so the caller can watch the load as it runs). */
  tally?: LoadTally;
}

export function newTally(): LoadTally {
  return { sent: 0, answered: new Map(), chargedCredits: 0, unanswered: 0, refused: 0 };
}

/**
 * Closed-loop load on `connections` kept-alive connections, as many clients would send it. Each loop ends
 * at its first request without a response (the server died): that request counts as unanswered.
 */
export async function runLoad(options: LoadOptions): Promise<LoadTally> {
  const tally = options.tally ?? newTally();
  const agent = new Agent({ connections: options.connections, pipelining: 1 });
  const loop = async () => {
    while (!options.stop(tally)) {
      const r = options.makeRequest(tally.sent++);
      try {
        const res = await request(options.origin + r.path, {
          dispatcher: agent,
          method: r.method,
          headers: r.headers,
          ...(r.body !== undefined ? { body: r.body } : {}),
        });
        await res.body.arrayBuffer();
        tally.answered.set(res.statusCode, (tally.answered.get(res.statusCode) ?? 0) + 1);
        tally.chargedCredits += Number(res.headers['x-credits-charged'] ?? 0);
      } catch (err) {
        if (errorCode(err) === 'ECONNREFUSED') tally.refused += 1;
        else tally.unanswered += 1;
        return;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.connections }, loop));
  } finally {
    await agent.destroy();
  }
  return tally;
}

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.code === 'ECONNREFUSED' ? e.code : e.cause?.code;
}
