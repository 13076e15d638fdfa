import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { type Db, type Row, runSqlite } from './db.js';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema.js';
import { Rag1764100000000 } from './migrations/1764100000000-rag.js';
import { Sla1764200000000 } from './migrations/1764200000000-sla.js';
import { UsageHourly1764300000000 } from './migrations/1764300000000-usage-hourly.js';
import { Dashboard1764400000000 } from './migrations/1764400000000-dashboard.js';
import { Memory1764500000000 } from './migrations/1764500000000-memory.js';
import { LexicalTerms1764600000000 } from './migrations/1764600000000-lexical-terms.js';
import { AttemptCounts1764700000000 } from './migrations/1764700000000-attempt-counts.js';
import { UsageUser1764800000000 } from './migrations/1764800000000-usage-user.js';
import { MemoryExtractions1764900000000 } from './migrations/1764900000000-memory-extractions.js';
import { Responses1765000000000 } from './migrations/1765000000000-responses.js';
import { StagingLog1765100000000 } from './migrations/1765100000000-staging-log.js';
import { KeyEndUser1765200000000 } from './migrations/1765200000000-key-end-user.js';
import { BackgroundResponses1765300000000 } from './migrations/1765300000000-background-responses.js';
import { Conversations1765400000000 } from './migrations/1765400000000-conversations.js';
import { WriteBatches1765450000000 } from './migrations/1765450000000-write-batches.js';
import { ResponseChains1796000000000 } from './migrations/1796000000000-response-chains.js';
import { FilesAndVectorStores1796100000000 } from './migrations/1796100000000-files-and-vector-stores.js';
import { KeyLimits1796200000000 } from './migrations/1796200000000-key-limits.js';
import { RequestLogs1796300000000 } from './migrations/1796300000000-request-logs.js';
import { Idempotency1796400000000 } from './migrations/1796400000000-idempotency.js';
import { acquireProcessLock, type ProcessLock } from './process-lock.js';
import { checkpointOnThisThread, startWalCheckpointer } from './wal-checkpointer.js';

// BIGINT (int8) and COUNT(*) come back from node-postgres as strings; every value we store fits in 2^53.
pg.types.setTypeParser(20, (value) => Number(value));

export const MIGRATIONS = [
  InitialSchema1763700000000,
  Rag1764100000000,
  Sla1764200000000,
  UsageHourly1764300000000,
  Dashboard1764400000000,
  Memory1764500000000,
  LexicalTerms1764600000000,
  AttemptCounts1764700000000,
  UsageUser1764800000000,
  MemoryExtractions1764900000000,
  Responses1765000000000,
  StagingLog1765100000000,
  KeyEndUser1765200000000,
  BackgroundResponses1765300000000,
  Conversations1765400000000,
  WriteBatches1765450000000,
  ResponseChains1796000000000,
  FilesAndVectorStores1796100000000,
  KeyLimits1796200000000,
  RequestLogs1796300000000,
  Idempotency1796400000000,
];

/** How often the SQLite WAL is copied back into the database file. */
const CHECKPOINT_INTERVAL_MS = 1000;

export interface StorageOptions {
  /** PostgreSQL when set; otherwise SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** Pool size for PostgreSQL. */
  poolSize?: number;
  /**
   * SQLite: this process is the server that owns the file (it holds its ProcessLock until close), so
   * limits and credits may be kept in memory. A second owner is refused. The CLI opens without it.
   */
  owner?: boolean;
}

export function sqlitePath(dataDir: string): string {
  return join(resolve(dataDir), 'pvai.sqlite');
}

function createDataSource(options: StorageOptions): DataSource {
  if (options.databaseUrl) {
    return new DataSource({
      type: 'postgres',
      url: options.databaseUrl,
      migrations: MIGRATIONS,
      migrationsTableName: 'pvai_migrations',
      extra: { max: options.poolSize ?? 20 },
      logging: false,
    });
  }
  return new DataSource({
    type: 'better-sqlite3',
    database: sqlitePath(options.dataDir),
    migrations: MIGRATIONS,
    migrationsTableName: 'pvai_migrations',
    // WAL lets readers run beside the writer; busy_timeout makes a second process wait instead of failing.
    prepareDatabase: (db: BetterSqlite3.Database) => {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      // Checkpoint on a timer (below) instead of every 1000 WAL pages inside some request's commit:
      // hot pages (account rows, limit counters) are then copied back once per interval, not per batch.
      db.pragma('wal_autocheckpoint = 0');
      // Never truncate the WAL in a commit (SQLite's default): with a 64 MB limit, the first commit after a
      // busy stretch truncated a 462 MB WAL in a 75 ms ftruncate on the event loop. The file is written over
      // in place instead; the checkpointer keeps it under ~256 MB (wal-checkpointer.ts), close() truncates it.
      db.pragma('journal_size_limit = -1');
    },
    logging: false,
  });
}

/** Opens the database, applies pending migrations and returns the storage port. */
export async function openDb(options: StorageOptions): Promise<Db> {
  // The lock file lives beside the database: the directory must exist first (a fresh machine has none).
  if (!options.databaseUrl) mkdirSync(resolve(options.dataDir), { recursive: true });
  const lock = options.owner && !options.databaseUrl ? acquireProcessLock(sqlitePath(options.dataDir)) : undefined;
  try {
    return await openDataSource(options, lock);
  } catch (err) {
    lock?.release();
    throw err;
  }
}

/**
 * The key of the advisory lock migrations run under on PostgreSQL (any fixed bigint no other lock of
 * pvai uses: the rate limiter's are hashes of 'pvai_rate_limit:' and an account id).
 */
const MIGRATION_LOCK_KEY = 7_364_821_905_113;

/**
 * Runs pending migrations. On PostgreSQL several replicas may start at once on an empty database: each
 * would find every migration pending and all but one would fail (`relation "dashboard_sessions" already
 * exists`, 6 of 7 tries with two replicas). So they take turns under a session-level advisory lock held
 * on a connection of its own (outside the pool, whatever its size) for the whole run; the replicas that
 * waited then find nothing pending. A replica that dies holding it frees it with its connection.
 * SQLite needs no lock: one server owns the file (ProcessLock).
 */
async function runMigrations(dataSource: DataSource, databaseUrl: string | undefined): Promise<void> {
  if (!databaseUrl) {
    await dataSource.runMigrations({ transaction: 'each' });
    return;
  }
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await dataSource.runMigrations({ transaction: 'each' });
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  } finally {
    // Ending the session frees the lock too, should the migrations have failed.
    await lock.end();
  }
}

async function openDataSource(options: StorageOptions, lock: ProcessLock | undefined): Promise<Db> {
  const dataSource = createDataSource(options);
  await dataSource.initialize();
  try {
    await runMigrations(dataSource, options.databaseUrl);
  } catch (err) {
    await dataSource.destroy();
    throw err;
  }
  const close = async () => {
    if (dataSource.isInitialized) await dataSource.destroy();
  };
  if (options.databaseUrl) {
    const pool = (dataSource.driver as unknown as { master: pg.Pool }).master;
    const url = new URL(options.databaseUrl);
    return {
      dialect: 'postgres',
      pool,
      describe: `postgres ${url.hostname}:${url.port || 5432}${url.pathname}`,
      async query<T = Row>(sql: string, params: readonly unknown[] = []) {
        const result = await pool.query(sql, params as unknown[]);
        return result.rows as T[];
      },
      close,
    };
  }
  const sqlite = (dataSource.driver as unknown as { databaseConnection: BetterSqlite3.Database }).databaseConnection;
  // Off the event loop where it serves requests (the owning server); a CLI command keeps it here rather
  // than start a thread and a second connection for a process that lives a second.
  const checkpoints = lock
    ? startWalCheckpointer(sqlite, sqlitePath(options.dataDir), CHECKPOINT_INTERVAL_MS)
    : checkpointOnThisThread(sqlite, CHECKPOINT_INTERVAL_MS);
  return {
    dialect: 'sqlite',
    sqlite,
    owned: lock !== undefined,
    describe: `sqlite ${sqlitePath(options.dataDir)}`,
    async query<T = Row>(sql: string, params: readonly unknown[] = []) {
      return runSqlite<T>(sqlite, sql, params);
    },
    async close() {
      await checkpoints.stop();
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
      await close();
      lock?.release();
    },
  };
}
