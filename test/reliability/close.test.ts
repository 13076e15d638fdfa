import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { Runtime } from '../../src/compose.js';
import { startServer } from '../../src/server.js';
import { openDb } from '../../src/storage/index.js';
import { backends, createTestDatabase } from '../support/databases.js';
import { testServerConfig } from '../support/server.js';

/**
 * The runtime's close (the end of every stop): each part is closed even when parts before it fail, the last opened
 * first (so each closes before what it runs on, the database last), and every failure is reported.
 */

/** Notes each close as it happens, still closing the part; `fail` parts throw instead. */
function watchCloses(runtime: Runtime, fail: Record<string, Error>): string[] {
  const closed: string[] = [];
  const watch = <T extends object, K extends keyof T & string>(name: string, part: T, method: K) => {
    const original = (part[method] as () => Promise<void>).bind(part);
    part[method] = (async () => {
      closed.push(name);
      const failure = fail[name];
      if (failure) throw failure;
      await original();
    }) as T[K];
  };
  watch('memory', runtime.memory, 'close');
  watch('router', runtime.router, 'close');
  watch('cache', runtime.cache, 'close');
  watch('sandbox', runtime.sandbox, 'close');
  watch('usage', runtime.usage, 'close');
  watch('sla', runtime.sla, 'close');
  watch('limiter', runtime.limiter, 'close');
  watch('accounts', runtime.accounts, 'close');
  watch('db', runtime.db, 'close');
  return closed;
}

for (const backend of backends()) {
  describe(`closing the runtime (${backend})`, () => {
    it('closes every part when some fail, in order, and reports each failure', async () => {
      const database = await createTestDatabase(backend);
      const running = await startServer(testServerConfig(database), { logger: pino({ level: 'silent' }) });
      try {
        assert.equal((await fetch(`${running.url}/z1/health`)).status, 200);
        const { runtime } = running;
        // Nothing buffered is left for a timer to flush while the stop runs: only the close flushes.
        await runtime.usage.flush();
        const cacheFailure = new Error('the cache would not close');
        const limiterFailure = new Error('the limiter would not close');
        const closed = watchCloses(runtime, { cache: cacheFailure, limiter: limiterFailure });

        await assert.rejects(running.close(), (err: unknown) => {
          assert.ok(err instanceof AggregateError, `${err}`);
          assert.deepEqual(err.errors, [limiterFailure, cacheFailure]);
          assert.match(err.message, /limiter, cache/);
          return true;
        });
        // The last opened first: the capabilities (memory's worker, the SLA and usage writers, accounts' refunds)
        // before the engines they run on, the database last.
        assert.deepEqual(closed, ['memory', 'sandbox', 'sla', 'usage', 'accounts', 'limiter', 'cache', 'router', 'db']);
        // The database, last, was really closed after the failures.
        await assert.rejects(runtime.db.query('SELECT 1', []));
        if (backend === 'sqlite') {
          // And let go of its file: another server may own it now.
          const next = await openDb({ dataDir: database.dataDir, owner: true });
          await next.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
}
