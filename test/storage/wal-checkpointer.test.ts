import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import {
  checkpointOnThisThread,
  startWalCheckpointer,
  type WalCheckpointer,
  type WalLimits,
} from '../../src/storage/wal-checkpointer.js';
import { eventually } from '../support/eventually.js';

const INTERVAL_MS = 50;

/** A WAL database that, like the server's, never checkpoints by itself. */
function walDatabase() {
  const file = join(mkdtempSync(join(tmpdir(), 'pvai-wal-')), 'db.sqlite');
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)');
  const insert = sqlite.prepare('INSERT INTO rows (payload) VALUES (?)');
  return {
    file,
    sqlite,
    /** Writes ~200 KB, which lands in the WAL, not yet in the database file. */
    write: sqlite.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run('x'.repeat(100));
    }),
    fileSize: () => statSync(file).size,
    walSize: () => statSync(`${file}-wal`).size,
  };
}

const until = (condition: () => boolean, timeoutMs = 3000): Promise<boolean> =>
  eventually(async () => condition(), Boolean, timeoutMs);

describe('WAL checkpointer', () => {
  let running: WalCheckpointer | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it('copies the WAL into the database file on its own', async () => {
    const db = walDatabase();
    const before = db.fileSize();
    db.write();
    assert.equal(db.fileSize(), before, 'the rows are only in the WAL');
    running = startWalCheckpointer(db.sqlite, db.file, INTERVAL_MS);
    assert.ok(await until(() => db.fileSize() > before + 100_000), 'the database file received the rows');
    db.sqlite.close();
  });

  for (const [where, start] of [
    ['a worker', startWalCheckpointer],
    [
      'this thread (the CLI, the fallback)',
      (sqlite: Database.Database, _file: string, ms: number, limits: WalLimits) =>
        checkpointOnThisThread(sqlite, ms, limits),
    ],
  ] as const) {
    it(`keeps the WAL bounded while writes never pause, checkpointing on ${where} (PASSIVE alone lets it grow without end)`, async () => {
      const db = walDatabase();
      // SQLite's default: the commit that starts the file over never truncates it (the server's setting too).
      db.sqlite.pragma('journal_size_limit = -1');
      const insert = db.sqlite.prepare('INSERT INTO rows (payload) VALUES (?)');
      // Restarted past 256 KB (the server's bound is 256 MB).
      running = start(db.sqlite, db.file, INTERVAL_MS, { restartAboveBytes: 256 * 1024 });
      // 1,200 commits a millisecond apart, as a server at 1,000 req/s commits: no pass finds the WAL idle.
      let largest = 0;
      let commits = 0;
      while (commits < 1200) {
        insert.run('x'.repeat(1000));
        commits++;
        largest = Math.max(largest, db.walSize());
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      // Each commit appends a 4 KB page or more: unchecked (PASSIVE only), the WAL grew to ~4.3 MB here.
      assert.ok(largest < 2 * 1024 * 1024, `the WAL stayed small: at most ${largest} bytes`);
      db.sqlite.close();
    });
  }

  it('stops checkpointing once stopped', async () => {
    const db = walDatabase();
    running = startWalCheckpointer(db.sqlite, db.file, INTERVAL_MS);
    await running.stop();
    running = undefined;
    const before = db.fileSize();
    db.write();
    await new Promise((resolve) => setTimeout(resolve, 5 * INTERVAL_MS));
    assert.equal(db.fileSize(), before);
    db.sqlite.close();
  });

  it('keeps a process that has nothing else to do alive until stopped', () => {
    // A CLI command awaits stop() as its last step; if that await let the process exit, it printed nothing.
    const module = pathToFileURL(join(import.meta.dirname, '../../src/storage/wal-checkpointer.ts')).href;
    const script = `
      import Database from 'better-sqlite3';
      import { startWalCheckpointer } from ${JSON.stringify(module)};
      const file = ${JSON.stringify(walDatabase().file)};
      const checkpointer = startWalCheckpointer(new Database(file), file, 1000);
      await checkpointer.stop();
      console.log('stopped');
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '../..'),
      encoding: 'utf8',
    });
    assert.equal(out.trim(), 'stopped');
  });

  it('checkpoints on this thread when the worker cannot open the file', async () => {
    const db = walDatabase();
    const before = db.fileSize();
    db.write();
    // A directory cannot be opened as a database: the worker dies and the fallback takes over.
    running = startWalCheckpointer(db.sqlite, tmpdir(), INTERVAL_MS);
    assert.ok(await until(() => db.fileSize() > before + 100_000), 'the database file received the rows');
    await running.stop();
    running = undefined;
    db.sqlite.close();
  });
});
