import type pg from 'pg';
import { type PostgresDb, type Row, runSqlite, type SqliteDb } from './db.js';

/** The statements of one open PostgreSQL transaction: `Db.query`, on the connection that holds it. */
export interface Transaction {
  /** `$n` placeholders, as `Db.query`. A plain function: `tx.query` may be passed on unbound. */
  query<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

/**
 * The statements of one open SQLite transaction: `Db.query`'s SQL and parameters, but synchronous. The
 * whole transaction runs within one turn of the event loop, so no other request's statement can fall
 * into it (better-sqlite3 has one connection, and any statement run while it is open belongs to it).
 */
export interface SqliteTransaction {
  /** `$n` placeholders, as `Db.query`; returns the rows themselves. May be passed on unbound. */
  query<T = Row>(sql: string, params?: readonly unknown[]): T[];
}

/** A SQLite transaction's result must not be a promise: the work after its first `await` would run outside it. */
type NotPromise<T> = T extends PromiseLike<unknown> ? never : T;

/**
 * Runs `fn` as one transaction: everything it writes is committed together when it returns, or nothing
 * is when it throws (the error is rethrown as it was). Narrow `db` by `db.dialect` first; the two
 * dialects differ in one way that matters:
 *
 * - **PostgreSQL**: `fn` is async and gets `tx`, whose `query` runs on a connection checked out of the
 *   pool for this transaction alone (`db.query` inside `fn` would run outside it, on another
 *   connection; with a pool of one it would wait for ever). BEGIN, `fn(tx)`, COMMIT; on a throw ROLLBACK,
 *   and should the ROLLBACK fail too (a connection lost) its error is dropped and `fn`'s rethrown. The
 *   connection always goes back before the promise settles, or away when it was lost or its ROLLBACK
 *   failed (never reused in an unknown state; its loss is not an uncaught 'error'); `tx` refuses
 *   statements after that. A `transaction` inside `fn` is not nested: it takes a second connection and
 *   commits on its own. Statements of one `tx` run one after another, even when not awaited in turn.
 *
 *   ```ts
 *   const kept = await transaction(db, async (tx) => {
 *     const rows = await tx.query<{ id: string }>('SELECT id FROM t WHERE id = ANY($1::text[]) FOR KEY SHARE', [ids]);
 *     await tx.query('DELETE FROM u WHERE t_id = ANY($1::text[])', [rows.map((r) => r.id)]);
 *     return rows.length;
 *   });
 *   ```
 *
 * - **SQLite**: better-sqlite3's `db.sqlite.transaction(fn)()`, synchronous: BEGIN (deferred), `fn(tx)`,
 *   COMMIT, or ROLLBACK on a throw; inside another SQLite transaction it is a savepoint of it. `fn` must
 *   not be async (refused by the types, and by better-sqlite3 with a TypeError). Statements prepared by the
 *   store itself (`db.sqlite.prepare`) may run inside `fn` as well as `tx.query`'s.
 *
 *   ```ts
 *   const n = transaction(db, (tx) => {
 *     for (const row of rows) insert.run(row);
 *     return tx.query<{ n: number }>('SELECT count(*) AS n FROM t WHERE a = $1', [a])[0]?.n ?? 0;
 *   });
 *   ```
 */
export function transaction<T>(db: PostgresDb, fn: (tx: Transaction) => Promise<T>): Promise<T>;
export function transaction<T>(db: SqliteDb, fn: (tx: SqliteTransaction) => NotPromise<T>): T;
export function transaction<T>(
  db: PostgresDb | SqliteDb,
  fn: ((tx: Transaction) => Promise<T>) | ((tx: SqliteTransaction) => T),
): Promise<T> | T {
  if (db.dialect === 'sqlite') {
    const sqlite = db.sqlite;
    const tx: SqliteTransaction = { query: (sql, params) => runSqlite(sqlite, sql, params) };
    return sqlite.transaction(() => (fn as (tx: SqliteTransaction) => T)(tx))();
  }
  return postgresTransaction(db.pool, fn as (tx: Transaction) => Promise<T>);
}

async function postgresTransaction<T>(pool: pg.Pool, fn: (tx: Transaction) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let open = true;
  const tx: Transaction = {
    query: async <R = Row>(sql: string, params: readonly unknown[] = []) => {
      if (!open) throw new Error('the transaction is over: a statement after its commit or rollback');
      return (await client.query(sql, params as unknown[])).rows as R[];
    },
  };
  // A checked-out client has no 'error' listener of the pool's: a connection lost between two statements
  // (a restart, a terminated backend) would be an uncaught exception. Kept here; the next statement fails.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost = err;
  };
  client.on('error', onError);
  // A connection lost, or whose ROLLBACK failed, is in no known state: the pool destroys it instead of reusing it.
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(tx);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError as Error;
    }
    throw err;
  } finally {
    open = false;
    client.removeListener('error', onError);
    client.release(lost ?? broken);
  }
}
