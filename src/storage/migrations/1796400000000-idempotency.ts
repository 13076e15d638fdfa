import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency-Key records (src/idempotency/): one row per (scope, key), the scope an account's id (or `admin`).
 * Its INSERT is the claim: the unique key lets one request of any replica win; the others wait and replay.
 * `owner` and `lease_until` hold a running request's claim (a retry takes over an expired one, refunding
 * `refunds`, what the dead attempt charged); `status`, `headers`, `body` are the answer once given (`stored` 0:
 * over the size cap, kept without its body). Swept by `expires_at`; an end user's rows by (scope, user_id).
 */
export class Idempotency1796400000000 implements MigrationInterface {
  name = 'Idempotency1796400000000';

  async up(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    const bigint = postgres ? 'BIGINT' : 'INTEGER';
    const bytes = postgres ? 'BYTEA' : 'BLOB';
    const statements = [
      `CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        user_id TEXT,
        owner TEXT,
        lease_until ${bigint} NOT NULL,
        refunds TEXT NOT NULL DEFAULT '[]',
        status INTEGER,
        stored INTEGER NOT NULL DEFAULT 0,
        headers TEXT,
        body ${bytes},
        created_at ${bigint} NOT NULL,
        expires_at ${bigint} NOT NULL,
        PRIMARY KEY (scope, idem_key)
      )`,
      'CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)',
      'CREATE INDEX idempotency_keys_user ON idempotency_keys (scope, user_id)',
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE IF EXISTS idempotency_keys');
  }
}
