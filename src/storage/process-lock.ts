import Database from 'better-sqlite3';

export interface ProcessLock {
  release(): void;
}

/**
 * Holds an exclusive lock on `${file}.lock` for as long as this process wants to own `file`. SQLite's
 * own file locking does the work, so the operating system frees the lock when the process dies, however
 * it dies: a stale lock never needs cleaning up. Waits up to `waitMs` for an owner that is shutting down.
 */
export function acquireProcessLock(file: string, waitMs = 2000): ProcessLock {
  const lock = new Database(`${file}.lock`, { timeout: waitMs });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new Error(
        `another pvai server is already using ${file}; one server owns an embedded database ` +
          '(run replicas on PostgreSQL with DATABASE_URL)',
      );
    }
    throw err;
  }
  return {
    release() {
      if (lock.open) lock.close();
    },
  };
}
