import type BetterSqlite3 from 'better-sqlite3';
import type pg from 'pg';

export type Row = Record<string, unknown>;

interface DbCommon {
  /** Runs one statement. Placeholders are `$1, $2, …` on both dialects. */
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
  /** Human-readable location for `doctor` and readiness (never includes a password). */
  readonly describe: string;
}

/**
 * The storage port every repository is written against. Statements that must hold together run in
 * `transaction(db, fn)` (transaction.ts); SQL that differs by dialect is a store's DialectStatements.
 * Beyond that, adapters branch on `dialect`: on SQLite a server that `owns` the file (see ProcessLock)
 * keeps limits and credits in memory and writes them behind; on PostgreSQL the rate limiter's admission
 * is a function holding an advisory lock.
 */
export type Db =
  | (DbCommon & {
      readonly dialect: 'sqlite';
      readonly sqlite: BetterSqlite3.Database;
      /** This process holds the file's ProcessLock: no other server writes limits or credits to it. */
      readonly owned: boolean;
    })
  | (DbCommon & { readonly dialect: 'postgres'; readonly pool: pg.Pool });

type Dialect = Db['dialect'];
export type SqliteDb = Extract<Db, { dialect: 'sqlite' }>;
export type PostgresDb = Extract<Db, { dialect: 'postgres' }>;

/**
 * A store's statements for each dialect, chosen once with `statements[db.dialect]`. `S` names every
 * statement the store needs, so neither dialect can lack one (or carry one the other has not).
 */
export type DialectStatements<S> = { readonly [D in Dialect]: S };

/**
 * Put before the tenant columns of a lookup by a handful of ids (`WHERE ${p}account_id = $1 AND
 * ${p}user_id = $2 AND id IN (…)`): on SQLite a unary `+` keeps the planner from choosing the
 * (account, user) index, which walks every row of the user, over the id index. Measured at 10,000
 * memories of one user: 1.0 ms for 3 ids by the tenant index, 0.016 ms by id. PostgreSQL plans it well.
 */
export function byIdsFirst(db: Db): string {
  return db.dialect === 'sqlite' ? '+' : '';
}

/**
 * `count` rows cut into runs of the given sizes (largest first, ending with 1), each as [first row, size]:
 * a multi-row statement then exists in those few sizes only, each prepared once and reused.
 */
export function* fixedChunks(count: number, sizes: readonly number[]): Generator<[number, number]> {
  for (let at = 0; at < count; ) {
    const size = sizes.find((n) => count - at >= n) ?? 1;
    yield [at, size];
    at += size;
  }
}

/** `$first, $first+1, …`: `count` numbered parameters for an `IN (…)` or `VALUES (…)` list. */
export function placeholderList(count: number, first = 1): string {
  return Array.from({ length: count }, (_, i) => `$${first + i}`).join(', ');
}

/**
 * Repositories write PostgreSQL's `$1` placeholders; better-sqlite3 binds positional `?` only in
 * order, so `$n` becomes the named parameter `@pn` (which also allows one value to be used twice).
 */
export function toSqlitePlaceholders(sql: string): string {
  return sql.replace(/\$(\d+)/g, '@p$1');
}

/** The named parameters for toSqlitePlaceholders; better-sqlite3 binds neither booleans nor undefined. */
export function toSqliteParams(params: readonly unknown[]): Record<string, unknown> {
  const named: Record<string, unknown> = {};
  params.forEach((p, i) => {
    named[`p${i + 1}`] = p === true ? 1 : p === false ? 0 : p === undefined ? null : p;
  });
  return named;
}

const PREPARED_PER_CONNECTION = 1000;
const prepared = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

/**
 * Runs one statement written with `$n` placeholders on a better-sqlite3 connection, synchronously:
 * its rows (a reader, `RETURNING` included) or none. Statements are prepared once per connection and
 * SQL text; the cache is bounded, so generated SQL (multi-row inserts) cannot grow it without end.
 */
export function runSqlite<T = Row>(sqlite: BetterSqlite3.Database, sql: string, params: readonly unknown[] = []): T[] {
  let statements = prepared.get(sqlite);
  if (!statements) {
    statements = new Map();
    prepared.set(sqlite, statements);
  }
  let stmt = statements.get(sql);
  if (!stmt) {
    if (statements.size >= PREPARED_PER_CONNECTION) statements.clear();
    stmt = sqlite.prepare(toSqlitePlaceholders(sql));
    statements.set(sql, stmt);
  }
  const bound = toSqliteParams(params);
  if (stmt.reader) return stmt.all(bound) as T[];
  stmt.run(bound);
  return [];
}

/** A check of the database for readiness and `pvai doctor`: one round trip. */
export async function checkDatabase(db: Db): Promise<{ ok: boolean; detail: string }> {
  try {
    await db.query('SELECT 1 AS ok');
    return { ok: true, detail: db.describe };
  } catch (err) {
    return { ok: false, detail: `${db.describe}: ${(err as Error).message}` };
  }
}
