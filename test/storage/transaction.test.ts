import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDb } from '../../src/storage/data-source.js';
import type { Db, PostgresDb } from '../../src/storage/db.js';
import { transaction } from '../../src/storage/transaction.js';
import { backends, createTestDatabase, postgresOnly, type TestDatabase } from '../support/databases.js';

/**
 * `transaction(db, fn)` on each dialect: all of `fn`'s writes or none, its error rethrown as it was, and on
 * PostgreSQL the connection it checked out always given back (a small pool would run dry otherwise).
 * SQLite's form is synchronous, PostgreSQL's async, so each test says the same thing in both.
 */
for (const backend of backends()) {
  describe(`transaction (${backend})`, () => {
    let database: TestDatabase;
    let db: Db;
    let table = 0;

    before(async () => {
      database = await createTestDatabase(backend);
      // A pool of two: a transaction that kept its connection would leave the next ones waiting for ever.
      db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
    });
    after(async () => {
      await db.close();
      await database.drop();
    });

    /** A table of its own for each test. */
    const freshTable = async () => {
      const name = `tx_probe_${++table}`;
      await db.query(`CREATE TABLE ${name} (id TEXT PRIMARY KEY, n INTEGER NOT NULL)`);
      return name;
    };
    const ids = async (name: string) =>
      (await db.query<{ id: string }>(`SELECT id FROM ${name} ORDER BY id`)).map((r) => r.id);

    type Query = (sql: string, params?: unknown[]) => unknown;
    /**
     * Runs `write` (the same statements on both dialects) as fn of a transaction and returns what it
     * returned. On SQLite synchronously; on PostgreSQL each statement is awaited before fn returns.
     */
    const run = (write: (query: Query) => string | undefined): Promise<string | undefined> => {
      const current = db;
      if (current.dialect === 'sqlite') {
        return Promise.resolve().then(() => transaction(current, (tx) => write(tx.query)));
      }
      return transaction(current, async (tx) => {
        const pending: Promise<unknown>[] = [];
        const result = write((sql, params) => pending.push(tx.query(sql, params)));
        await Promise.all(pending);
        return result;
      });
    };

    it('commits everything fn wrote when it returns, and returns its result', async () => {
      const name = await freshTable();
      const result = await run((query) => {
        query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['a', 1]);
        query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['b', 2]);
        return 'done';
      });
      assert.equal(result, 'done');
      assert.deepEqual(await ids(name), ['a', 'b']);
    });

    it('writes nothing when fn throws, and rethrows its error', async () => {
      const name = await freshTable();
      const failure = new Error('fn failed');
      await assert.rejects(
        run((query) => {
          query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['a', 1]);
          throw failure;
        }),
        (err) => err === failure,
      );
      assert.deepEqual(await ids(name), []);
    });

    it('writes nothing when one of its statements fails', async () => {
      const name = await freshTable();
      await db.query(`INSERT INTO ${name} (id, n) VALUES ('taken', 0)`);
      if (db.dialect === 'sqlite') {
        const sqlite = db;
        assert.throws(
          () =>
            transaction(sqlite, (tx) => {
              tx.query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['a', 1]);
              tx.query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['taken', 2]);
            }),
          /UNIQUE constraint failed/,
        );
      } else {
        await assert.rejects(
          transaction(db, async (tx) => {
            await tx.query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['a', 1]);
            await tx.query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['taken', 2]);
          }),
          (err: { code?: string }) => err.code === '23505',
        );
      }
      assert.deepEqual(await ids(name), ['taken']);
    });

    it('lets tx.query read what the transaction wrote, with $n placeholders like Db.query', async () => {
      const name = await freshTable();
      const read = async () => {
        if (db.dialect === 'sqlite') {
          return transaction(db, (tx) => {
            tx.query(`INSERT INTO ${name} (id, n) VALUES ($1, $2), ($3, $2)`, ['a', 7, 'b']);
            return tx.query<{ id: string; n: number }>(`SELECT id, n FROM ${name} WHERE n = $1 ORDER BY id`, [7]);
          });
        }
        return transaction(db, async (tx) => {
          await tx.query(`INSERT INTO ${name} (id, n) VALUES ($1, $2), ($3, $2)`, ['a', 7, 'b']);
          return tx.query<{ id: string; n: number }>(`SELECT id, n FROM ${name} WHERE n = $1 ORDER BY id`, [7]);
        });
      };
      assert.deepEqual(await read(), [
        { id: 'a', n: 7 },
        { id: 'b', n: 7 },
      ]);
    });

    it('survives many failing transactions in a row and still commits the next', async () => {
      const name = await freshTable();
      for (let i = 0; i < 25; i++) {
        await assert.rejects(
          run((query) => {
            query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, [`x${i}`, i]);
            throw new Error(`failure ${i}`);
          }),
          { message: `failure ${i}` },
        );
      }
      await run((query) => {
        query(`INSERT INTO ${name} (id, n) VALUES ($1, $2)`, ['kept', 1]);
        return undefined;
      });
      assert.deepEqual(await ids(name), ['kept']);
      if (db.dialect === 'postgres') assertPoolAtRest(db);
    });
  });
}

describe('transaction: SQLite specifics', () => {
  let database: TestDatabase;
  let db: Db;
  before(async () => {
    database = await createTestDatabase('sqlite');
    db = await openDb({ dataDir: database.dataDir });
    await db.query('CREATE TABLE tx_probe (id TEXT PRIMARY KEY)');
  });
  after(async () => {
    await db.close();
    await database.drop();
  });

  it('refuses an async fn (its work after the first await would run outside the transaction)', async () => {
    assert.equal(db.dialect, 'sqlite');
    if (db.dialect !== 'sqlite') return;
    const sqlite = db;
    assert.throws(
      () =>
        // @ts-expect-error: the types refuse an async fn on SQLite too
        transaction(sqlite, async (tx) => {
          tx.query('INSERT INTO tx_probe (id) VALUES ($1)', ['async']);
        }),
      /Transaction function cannot return a promise/,
    );
    assert.deepEqual(await db.query('SELECT id FROM tx_probe'), [], 'rolled back');
  });

  it('is a savepoint of an enclosing SQLite transaction: an inner failure undoes the inner writes only', async () => {
    if (db.dialect !== 'sqlite') return;
    const sqlite = db;
    transaction(sqlite, (tx) => {
      tx.query('INSERT INTO tx_probe (id) VALUES ($1)', ['outer']);
      assert.throws(() =>
        transaction(sqlite, (inner) => {
          inner.query('INSERT INTO tx_probe (id) VALUES ($1)', ['inner']);
          throw new Error('inner failed');
        }),
      );
    });
    assert.deepEqual(await db.query('SELECT id FROM tx_probe'), [{ id: 'outer' }]);
  });
});

/** Every connection of the pool idle again and nobody waiting for one. */
function assertPoolAtRest(db: PostgresDb): void {
  const { pool } = db;
  assert.equal(pool.waitingCount, 0, 'nobody waits for a connection');
  assert.equal(pool.idleCount, pool.totalCount, 'every connection is back in the pool');
  assert.ok(pool.totalCount <= 2, `the pool of 2 has ${pool.totalCount} connections`);
}

describe('transaction: PostgreSQL specifics', { skip: postgresOnly() }, () => {
  let database: TestDatabase;
  let db: PostgresDb;
  before(async () => {
    database = await createTestDatabase('postgres');
    const opened = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
    if (opened.dialect !== 'postgres') throw new Error('expected PostgreSQL');
    db = opened;
    await db.query('CREATE TABLE tx_probe (id TEXT PRIMARY KEY)');
  });
  after(async () => {
    await db?.close();
    await database?.drop();
  });

  it('runs on a connection of its own: others see nothing before the commit, everything after', async () => {
    await transaction(db, async (tx) => {
      await tx.query('INSERT INTO tx_probe (id) VALUES ($1)', ['hidden']);
      assert.deepEqual(await tx.query('SELECT id FROM tx_probe'), [{ id: 'hidden' }], 'seen inside');
      assert.deepEqual(await db.query('SELECT id FROM tx_probe'), [], 'not seen outside before the commit');
    });
    assert.deepEqual(await db.query('SELECT id FROM tx_probe'), [{ id: 'hidden' }]);
    await db.query('DELETE FROM tx_probe');
    assertPoolAtRest(db);
  });

  it('gives its connection back whether fn returns or throws (a pool of 2, 40 transactions)', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        transaction(db, async (tx) => {
          await tx.query('SELECT pg_sleep(0.001)');
          if (i % 2 === 0) throw new Error(`failure ${i}`);
          return i;
        }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'rejected').length, 20);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 20);
    assertPoolAtRest(db);
  });

  it("rethrows fn's error when the ROLLBACK fails too, and the lost connection leaves the pool", async () => {
    const failure = new Error('fn failed after its connection was lost');
    await assert.rejects(
      transaction(db, async (tx) => {
        const [own] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // The connection ends under the transaction (killed from the pool's other one): no ROLLBACK can be sent.
        await db.query('SELECT pg_terminate_backend($1)', [own?.pid]);
        await assert.rejects(tx.query('SELECT 1'));
        throw failure;
      }),
      (err) => err === failure,
    );
    assert.equal(db.pool.totalCount, 1, 'only the connection that killed it is left');
    assertPoolAtRest(db);
    assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
    assert.deepEqual(await transaction(db, async (tx) => tx.query('SELECT 2 AS two')), [{ two: 2 }]);
  });

  it('refuses statements on tx once the transaction is over', async () => {
    let leaked: ((sql: string) => Promise<unknown>) | undefined;
    await transaction(db, async (tx) => {
      leaked = tx.query;
    });
    assert.ok(leaked);
    await assert.rejects(leaked('SELECT 1'), /the transaction is over/);
    assertPoolAtRest(db);
  });
});
