export { AccountService } from './account-service.js';
export { createAccountStore } from './account-store-for.js';
export { accountsCapability } from './capability.js';

export { CreditLedgerAccountStore } from './credit-ledger.js';
export type { KeyLimitsInput } from './key-limits.js';
export { accountBody, keyBody } from './presenters.js';
export { SqlAccountStore } from './sql-account-store.js';
export type { AccountStore, ApiKeyRecord } from './types.js';
