import type { Db } from '../storage/index.js';
import { CreditLedgerAccountStore, type CreditLedgerOptions } from './credit-ledger.js';
import { SqlAccountStore } from './sql-account-store.js';
import type { AccountStore } from './types.js';

/**
 * The account store for a process. On an embedded database the server owns (openDb's `owner`) credits
 * are kept by the in-memory ledger; everywhere else (PostgreSQL, the CLI) every charge is one statement.
 */
export function createAccountStore(db: Db, options: CreditLedgerOptions = {}): AccountStore {
  const store = new SqlAccountStore(db);
  return db.dialect === 'sqlite' && db.owned ? new CreditLedgerAccountStore(store, options) : store;
}
