import type { Db, Row } from './db.js';
import { transaction } from './transaction.js';

export type Statement = [sql: string, params: readonly unknown[]];
/** A transaction's statements as a generator: each yielded statement is answered with its rows. */
export type Steps<T> = Generator<Statement, T, Row[]>;

/**
 * Runs `steps` as one transaction on either dialect: the same statements and logic, synchronous on SQLite
 * (where nothing may be awaited inside a transaction), awaited on PostgreSQL.
 */
export function inTransaction<T>(db: Db, steps: () => Steps<T>): Promise<T> {
  if (db.dialect === 'sqlite') {
    const box = transaction(db, (tx) => {
      const run = steps();
      let next = run.next();
      while (!next.done) next = run.next(tx.query(...next.value));
      return { value: next.value };
    });
    return Promise.resolve(box.value);
  }
  return transaction(db, async (tx) => {
    const run = steps();
    let next = run.next();
    while (!next.done) next = run.next(await tx.query(...next.value));
    return next.value;
  });
}
