import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { accountWithPassword, DashboardClient, type PageResponse } from '../support/dashboard.js';
import { backends, postgresOnly } from '../support/databases.js';
import { startReplica, startTestServer, type TestServer } from '../support/server.js';

/**
 * Sign-in throttling that cannot lock an account's owner out (a hostile probe: five wrong passwords from
 * anywhere used to lock the email for 15 minutes, the owner with the right password included). Clients
 * connect from different loopback addresses (127.0.0.x), so the server sees different client addresses.
 */

/** A sign-in from `from`; the client's connections are closed afterwards. */
async function signInFrom(url: string, from: string, email: string, password: string) {
  const client = new DashboardClient(url, { from });
  try {
    const res = await client.signIn(email, password);
    return { ...res, signedIn: client.cookies.has('pvai_session') };
  } finally {
    await client.close();
  }
}

function assertThrottled(res: PageResponse & { signedIn: boolean }, what: string) {
  assert.equal(res.status, 429, what);
  assert.match(res.html, /Too many failed sign-ins\. Try again in \d+ minutes?\./, what);
  assert.equal(res.signedIn, false, what);
}

for (const backend of backends()) {
  describe(`dashboard sign-in throttling (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(() => server.close());

    it("lets the owner sign in from their address while an attacker's address is throttled", async () => {
      const owner = await accountWithPassword(server, 'free');
      for (let i = 0; i < 5; i++) {
        const res = await signInFrom(server.url, '127.0.0.2', owner.email, `guess-${i}`);
        assert.equal(res.status, 401, `guess ${i + 1}`);
      }
      for (let i = 0; i < 10; i++) {
        assertThrottled(await signInFrom(server.url, '127.0.0.2', owner.email, `guess-${5 + i}`), `guess ${6 + i}`);
      }
      // The right password from the attacker's address waits too: the pair, not the guess, is throttled.
      assertThrottled(
        await signInFrom(server.url, '127.0.0.2', owner.email, owner.password),
        'the right password from the throttled address',
      );
      // The owner, from another address, is not affected.
      const mine = await signInFrom(server.url, '127.0.0.3', owner.email, owner.password);
      assert.equal(mine.status, 303);
      assert.equal(mine.location, '/dashboard/keys');
      assert.equal(mine.signedIn, true);
    });

    it('answers a throttled sign-in with 429 and Retry-After up to the 15-minute window', async () => {
      const owner = await accountWithPassword(server, 'free');
      const client = new DashboardClient(server.url, { from: '127.0.0.4' });
      try {
        for (let i = 0; i < 5; i++) assert.equal((await client.signIn(owner.email, 'wrong-password')).status, 401);
        const res = await client.signIn(owner.email, owner.password);
        assert.equal(res.status, 429);
        const wait = Number(res.headers.get('retry-after'));
        assert.ok(wait > 14 * 60 && wait <= 15 * 60, `Retry-After ${wait}`);
      } finally {
        await client.close();
      }
    });

    it('throttles an address that tries many emails after 20 failures, and only that address', async () => {
      const owner = await accountWithPassword(server, 'free');
      for (let i = 0; i < 20; i++) {
        const res = await signInFrom(server.url, '127.0.0.5', `nobody-${i}@example.com`, 'whatever-password');
        assert.equal(res.status, 401, `email ${i + 1}`);
      }
      assertThrottled(
        await signInFrom(server.url, '127.0.0.5', 'yet-another@example.com', 'whatever-password'),
        'a 21st email from the same address',
      );
      assertThrottled(
        await signInFrom(server.url, '127.0.0.5', owner.email, owner.password),
        'an account with its right password from the throttled address',
      );
      assert.equal((await signInFrom(server.url, '127.0.0.6', owner.email, owner.password)).status, 303);
    });

    it("forgets a pair's failures at a success, and does not count the success against the address", async () => {
      const owner = await accountWithPassword(server, 'free');
      const from = '127.0.0.7';
      // Without the pair forgotten, the second round's failures would pass its 5; with the successes
      // counted, the address would be at 20 after these four rounds.
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 4; i++) assert.equal((await signInFrom(server.url, from, owner.email, 'typo')).status, 401);
        assert.equal((await signInFrom(server.url, from, owner.email, owner.password)).status, 303, `round ${round}`);
      }
      for (let i = 0; i < 4; i++) {
        const res = await signInFrom(server.url, from, `other-${i}@example.com`, 'typo');
        assert.equal(res.status, 401, `failure ${17 + i} of the address`);
      }
      assertThrottled(await signInFrom(server.url, from, owner.email, 'typo'), 'the 21st failure');
    });

    it('stores the counts in attempt_counts, with no email in clear', async () => {
      const owner = await accountWithPassword(server, 'free');
      for (let i = 0; i < 3; i++) await signInFrom(server.url, '127.0.0.8', owner.email, 'wrong-password');
      const rows = await server.running.runtime.db.query<{ key: string; attempts: number }>(
        "SELECT key, attempts FROM attempt_counts WHERE key LIKE 'sign-in:%'",
      );
      assert.ok(
        rows.some((r) => r.key === 'sign-in:address:127.0.0.8' && Number(r.attempts) === 3),
        JSON.stringify(rows),
      );
      assert.equal(rows.filter((r) => r.key.startsWith('sign-in:pair:') && Number(r.attempts) === 3).length, 1);
      assert.ok(!JSON.stringify(rows).includes(owner.email.split('@')[0] ?? owner.email));
    });
  });
}

describe('dashboard sign-in throttling across replicas (postgres)', { skip: postgresOnly() }, () => {
  let first: TestServer;
  let second: RunningServer;

  before(async () => {
    first = await startTestServer('postgres');
    second = await startReplica(first);
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it("counts failures on either replica together: the pair is throttled on both, the owner's address on neither", async () => {
    const owner = await accountWithPassword(first, 'free');
    const replicas = [first.url, second.url];
    for (let i = 0; i < 5; i++) {
      const res = await signInFrom(replicas[i % 2] ?? '', '127.0.0.9', owner.email, `guess-${i}`);
      assert.equal(res.status, 401, `guess ${i + 1}`);
    }
    for (const url of replicas) {
      assertThrottled(await signInFrom(url, '127.0.0.9', owner.email, owner.password), `on ${url}`);
    }
    for (const url of replicas) {
      assert.equal((await signInFrom(url, '127.0.0.10', owner.email, owner.password)).status, 303, `owner on ${url}`);
    }
  });
});
