import { after, before, describe } from 'node:test';
import { type AccountStore, createAccountStore } from '../../src/accounts/index.js';
import type { Account } from '../../src/kernel/index.js';
import { createRateLimitStore } from '../../src/limits/index.js';
import type { RateLimitStore } from '../../src/limits/types.js';
import { openDb } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { SqlUsageStore } from '../../src/usage/index.js';
import { type Backend, backends, createTestDatabase, type TestDatabase } from '../support/databases.js';

export const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

/** The stores of one backend's database, opened before a suite's tests and closed after them. */
export class StoreFixture {
  database!: TestDatabase;
  db!: Db;
  accounts!: AccountStore;
  /** Tests that restart the limiter replace it; whichever is current is closed at the end. */
  limits!: RateLimitStore;
  usage!: SqlUsageStore;

  constructor(readonly backend: Backend) {}

  newAccount(credits = 0): Promise<Account> {
    return this.accounts.createAccount(
      { email: `${Math.random().toString(36).slice(2)}@example.com`, tier: 'free', credits, passwordHash: null },
      NOW,
    );
  }
}

/**
 * One contract per storage port; every adapter (SQLite, PostgreSQL) must pass all of it. Registers a
 * `storage contracts (<backend>)` suite per backend (only `only`'s, when given) and fills it with `body`.
 */
export function storageContracts(body: (s: StoreFixture) => void, only?: Backend): void {
  for (const backend of backends()) {
    if (only !== undefined && backend !== only) continue;
    describe(`storage contracts (${backend})`, () => {
      const s = new StoreFixture(backend);
      before(async () => {
        s.database = await createTestDatabase(backend);
        // Opened as the server opens it: on SQLite the owner keeps limits and credits in memory.
        s.db = await openDb({ databaseUrl: s.database.databaseUrl, dataDir: s.database.dataDir, owner: true });
        s.accounts = createAccountStore(s.db);
        s.limits = createRateLimitStore(s.db);
        s.usage = new SqlUsageStore(s.db);
      });
      after(async () => {
        await s.limits.close();
        await s.accounts.close();
        await s.db.close();
        await s.database.drop();
      });
      body(s);
    });
  }
}
