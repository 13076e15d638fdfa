/**
 * Storage infrastructure: the TypeORM data source (better-sqlite3 | pg), migrations, transactions, the
 * shape of a store's statements per dialect, write-behind timing, the end-of-turn group commit of an
 * embedded database, the event loop's lane for write-behind chunks, the pump of a stored job queue's worker.
 */
export { BackgroundLane, backgroundLane } from './background-lane.js';
export { openDb, sqlitePath } from './data-source.js';
export {
  byIdsFirst,
  checkDatabase,
  type Db,
  type DialectStatements,
  fixedChunks,
  type PostgresDb,
  placeholderList,
  type Row,
  runSqlite,
  type SqliteDb,
  toSqliteParams,
  toSqlitePlaceholders,
} from './db.js';
export { EXTERNAL_CHANGE_POLL_MS, type ExternalChanges, externalChanges } from './external-changes.js';
export { JobPump } from './job-pump.js';
export { RESPONSE_CACHE_POSTGRES_DDL } from './migrations/1763700000000-initial-schema.js';
export { MultiRow } from './multi-row.js';
export {
  RetryingWriter,
  type WriteBehindState,
} from './retrying-writer.js';
export { type StagedStream, StagingLog, stagingLogOf } from './staging-log.js';
export { inTransaction, type Statement, type Steps } from './steps.js';
export { type Transaction, transaction } from './transaction.js';
export { type TurnCommit, type TurnWriter, turnCommitOf } from './turn-commit.js';
export { WriteBatches } from './write-batches.js';
export { WriteBehindTimer } from './write-behind.js';
