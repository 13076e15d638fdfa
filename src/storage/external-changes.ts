import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDb } from './db.js';

/** How soon the owner of an embedded database notices another connection's commit (the CLI's). */
export const EXTERNAL_CHANGE_POLL_MS = 50;

/** A number that moves when another connection has committed to the file since it was last read. */
export interface ExternalChanges {
  readonly epoch: number;
}

const watched = new WeakMap<BetterSqlite3.Database, ExternalChanges>();

/**
 * The external-change epoch of an embedded database, one watch per connection whoever asks: what the
 * owning server keeps in memory (key resolutions, balances, users' memory versions) stays exact while
 * only it writes, and is dropped when the epoch moves. SQLite's `data_version` changes when another
 * connection commits (or truncates the WAL), never for this one's own writes; reading it takes the WAL's
 * read lock (~10 µs), so it is polled rather than read per request. The watch ends with the connection.
 */
export function externalChanges(db: SqliteDb): ExternalChanges {
  const known = watched.get(db.sqlite);
  if (known) return known;
  const state = { epoch: 0 };
  const dataVersion = db.sqlite.prepare('PRAGMA data_version').pluck();
  let last = dataVersion.get();
  const watch = setInterval(() => {
    if (!db.sqlite.open) {
      clearInterval(watch);
      return;
    }
    try {
      const version = dataVersion.get();
      if (version !== last) {
        last = version;
        state.epoch += 1;
      }
    } catch {
      // busy or closing: the next tick reads it again
    }
  }, EXTERNAL_CHANGE_POLL_MS);
  watch.unref();
  watched.set(db.sqlite, state);
  return state;
}
