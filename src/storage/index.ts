/** Storage infrastructure: the TypeORM data source (better-sqlite3 | pg), migrations, write-behind timing. */
export { MIGRATIONS, openDb, type StorageOptions, sqlitePath } from './data-source.js';
export {
  byIdsFirst,
  checkDatabase,
  type Db,
  placeholderList,
  type Row,
  toSqliteParams,
  toSqlitePlaceholders,
} from './db.js';
export { RESPONSE_CACHE_POSTGRES_DDL } from './migrations/1763700000000-initial-schema.js';
export { EndOfTurnWrite, WriteBehindTimer } from './write-behind.js';
