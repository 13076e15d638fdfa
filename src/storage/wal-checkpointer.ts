import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

export interface WalCheckpointer {
  /** Stops checkpointing; the caller then runs the final TRUNCATE checkpoint itself. */
  stop(): Promise<void>;
}

/** How long the WAL may grow under steady writes before it is started over, in bytes. */
export interface WalLimits {
  /** A WAL this long (frames since it last started over) is restarted. Default 256 MB. */
  restartAboveBytes?: number;
}

const DEFAULT_RESTART_ABOVE = 256 * 1024 * 1024;

/**
 * The worker: its own connection to the same file, checkpointing on a timer. A WAL checkpoint copies
 * pages back into the database file and fsyncs it, 2-8 ms here every second. On the event loop that
 * is a stall every request arriving meanwhile waits out; on another thread it overlaps with them.
 * PASSIVE never waits for (or blocks) the server's readers and writers.
 *
 * PASSIVE alone starves under steady writes: a writer starts the WAL over only when every frame is in the
 * database file, and a pass copies the frames there when it began while the server commits ~1.5 times a ms
 * at 1,000 req/s. Measured with the bench's load: the WAL grew 10-20 MB/s at 1,000 req/s and 30 MB/s at
 * saturation (462 MB after 20 s), without end while the load lasted. So once a pass finds the WAL longer
 * than `restartAbove` it tells the server's thread, which runs a RESTART checkpoint on its own connection:
 * it copies what came since the pass and the next commit starts the file over. That is one stall per ~250 MB
 * written (~15-25 s at 1,000 req/s), measured 0.2-3 ms after a second pass here, 17-23 ms when the fsyncs are
 * slow. The RESTART runs there, not here, because it holds the write lock: a server transaction that read
 * before it wrote would fail with SQLITE_BUSY rather than wait.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
const frameBytes = db.pragma('page_size', { simple: true }) + 24;
let asked = -1;
const timer = setInterval(() => {
  try {
    const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)');
    // Asked once per length: a WAL no one has written to since keeps its length until the next commit.
    if (log * frameBytes > workerData.restartAbove && log !== asked) {
      asked = log;
      // A second pass copies what came during the first, so the server's RESTART has only a few ms left.
      db.pragma('wal_checkpoint(PASSIVE)');
      parentPort.postMessage('restart');
    }
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

/**
 * Starts the WAL over (see WORKER_SOURCE): on the connection that serves requests, never inside a transaction,
 * and without waiting: busy (a checkpoint pass under way) it gives up, and the next pass asks again.
 */
function restart(sqlite: BetterSqlite3.Database): void {
  if (sqlite.inTransaction || !sqlite.open) return;
  const timeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  try {
    sqlite.pragma('busy_timeout = 0');
    sqlite.pragma('wal_checkpoint(RESTART)');
  } catch {
    // busy: the next pass asks again
  } finally {
    sqlite.pragma(`busy_timeout = ${timeout}`);
  }
}

/** Checkpoints the WAL on this thread: for a connection that serves no requests (the CLI). */
export function checkpointOnThisThread(
  sqlite: BetterSqlite3.Database,
  intervalMs: number,
  limits: WalLimits = {},
): WalCheckpointer {
  const restartAbove = limits.restartAboveBytes ?? DEFAULT_RESTART_ABOVE;
  const frameBytes = (sqlite.pragma('page_size', { simple: true }) as number) + 24;
  let restartedAt = -1;
  const timer = setInterval(() => {
    try {
      const [row] = sqlite.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>;
      const log = row?.log ?? 0;
      // Once per length, as the worker asks: a WAL no one has written to since keeps its length.
      if (log * frameBytes > restartAbove && log !== restartedAt) {
        restartedAt = log;
        restart(sqlite);
      }
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
  limits: WalLimits = {},
): WalCheckpointer {
  let fallback: WalCheckpointer | undefined;
  let stopping = false;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs,
      restartAbove: limits.restartAboveBytes ?? DEFAULT_RESTART_ABOVE,
    },
  });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // A worker that fails (the driver cannot load, the file cannot open) exits: the fallback takes over.
  worker.on('error', () => {});
  worker.on('message', () => {
    if (!stopping) restart(sqlite);
  });
  void exited.then(() => {
    if (!stopping) fallback = checkpointOnThisThread(sqlite, intervalMs, limits);
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
