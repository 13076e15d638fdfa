import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { GroupCommit } from '../../src/storage/group-commit.js';

describe('GroupCommit (SQLite)', () => {
  it('shares one transaction among the writers of one event-loop turn and commits after it', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pvai-gc-')), 'db.sqlite');
    const writer = new Database(file);
    writer.pragma('journal_mode = WAL');
    writer.exec('CREATE TABLE t (n INTEGER)');
    const reader = new Database(file, { readonly: true });
    const count = () => (reader.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
    const group = new GroupCommit(writer);
    const insert = writer.prepare('INSERT INTO t (n) VALUES (?)');
    const admit = writer.transaction((n: number) => insert.run(n));
    for (let i = 0; i < 5; i++) {
      group.enter();
      admit.immediate(i);
    }
    assert.equal(writer.inTransaction, true, 'one transaction stays open for the turn');
    assert.equal(count(), 0, 'nothing is visible to other connections before the commit');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(writer.inTransaction, false);
    assert.equal(count(), 5, 'all five writes committed together');
  });

  it('rolls back a failed writer to its savepoint without losing the others', async () => {
    const writer = new Database(':memory:');
    writer.exec('CREATE TABLE t (n INTEGER CHECK (n >= 0))');
    const group = new GroupCommit(writer);
    const insertPair = writer.transaction((a: number, b: number) => {
      writer.prepare('INSERT INTO t (n) VALUES (?)').run(a);
      writer.prepare('INSERT INTO t (n) VALUES (?)').run(b);
    });
    group.enter();
    insertPair.immediate(1, 2);
    group.enter();
    assert.throws(() => insertPair.immediate(3, -1));
    group.commit();
    assert.deepEqual(
      writer.prepare('SELECT n FROM t ORDER BY n').all(),
      [{ n: 1 }, { n: 2 }],
      'the failed pair left nothing behind; the first pair was committed',
    );
  });
});
