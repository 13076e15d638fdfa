import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

export interface WalCheckpointer {
  /** Stops checkpointing; the caller then runs the final TRUNCATE checkpoint itself. */
  stop(): Promise<void>;
}

/**
 * The worker: its own connection to the same file, checkpointing on a timer. A WAL checkpoint copies
 * pages back into the database file and fsyncs it, 2-8 ms here every second. On the event loop that
 * is a stall every request arriving meanwhile waits out; on another thread it overlaps with them.
 * PASSIVE never waits for (or blocks) the server's readers and writers.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy: the next tick checkpoints
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** Checkpoints the WAL on this thread: for a connection that serves no requests (the CLI). */
export function checkpointOnThisThread(sqlite: BetterSqlite3.Database, intervalMs: number): WalCheckpointer {
  const timer = setInterval(() => {
    try {
      sqlite.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // busy: the next tick checkpoints
    }
  }, intervalMs).unref();
  return {
    async stop() {
      clearInterval(timer);
    },
  };
}

/**
 * Checkpoints the WAL of `file` every `intervalMs` on a worker thread. If the worker cannot run (or
 * dies), checkpoints fall back to `sqlite` on this thread, so the WAL never grows without bound.
 */
export function startWalCheckpointer(
  sqlite: BetterSqlite3.Database,
  file: string,
  intervalMs: number,
): WalCheckpointer {
  let fallback: WalCheckpointer | undefined;
  let stopping = false;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file, intervalMs },
  });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // A worker that fails (the driver cannot load, the file cannot open) exits: the fallback takes over.
  worker.on('error', () => {});
  void exited.then(() => {
    if (!stopping) fallback = checkpointOnThisThread(sqlite, intervalMs);
  });
  return {
    async stop() {
      stopping = true;
      await fallback?.stop();
      // Referenced again while it winds down: otherwise nothing keeps the event loop alive while the
      // caller awaits, and a CLI exits before printing (and 'beforeExit' handlers fire mid-close).
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
