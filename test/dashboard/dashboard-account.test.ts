import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { accountWithPassword, DashboardClient } from '../support/dashboard.js';
import { backends, postgresOnly } from '../support/databases.js';
import { startReplica, startTestServer, type TestServer } from '../support/server.js';

/**
 * The account holder's own account in the dashboard, over plain HTTP: the password change (Post/Redirect/Get,
 * its refusals, the other sessions it ends) and the low-credit banner on every page.
 */
for (const backend of backends()) {
  describe(`dashboard: password and credits (${backend})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(backend);
    });
    after(() => server.close());

    /** A signed-in client and its account. */
    async function signedIn(credits = 1000) {
      const owner = await accountWithPassword(server, 'startup', credits);
      const client = new DashboardClient(server.url);
      assert.equal((await client.signIn(owner.email, owner.password)).status, 303);
      return { owner, client };
    }

    /** Posts the password form as the page has it (its CSRF token from a GET of the page). */
    async function change(client: DashboardClient, form: Record<string, string>) {
      await client.get('/dashboard/password');
      const res = await client.post('/dashboard/password', form);
      assert.equal(res.status, 303, 'every answer to the form is a redirect: a reload never posts it again');
      const page = await client.get(res.location ?? '');
      assert.equal(page.status, 200);
      return { location: res.location, html: page.html };
    }

    it('changes the password: the new one signs in, the old one no longer, other sessions end, this one stays', async () => {
      const { owner, client } = await signedIn();
      const other = new DashboardClient(server.url);
      assert.equal((await other.signIn(owner.email, owner.password)).status, 303);
      const page = await client.get('/dashboard/password');
      assert.match(page.html, /<label for="current">Current password<\/label>/);
      assert.match(page.html, /<label for="new-password">New password<\/label>/);

      const changed = await change(client, {
        current: owner.password,
        password: 'a-new-secret',
        repeat: 'a-new-secret',
      });
      assert.equal(changed.location, '/dashboard/password?changed=1');
      assert.match(changed.html, /Password changed\. Your other sessions were signed out\./);
      assert.equal((await client.get('/dashboard/keys')).status, 200, 'this session stays');
      assert.equal((await other.get('/dashboard/keys')).location, '/dashboard/sign-in', 'the other session ended');
      assert.equal((await new DashboardClient(server.url).signIn(owner.email, owner.password)).status, 401);
      assert.equal((await new DashboardClient(server.url).signIn(owner.email, 'a-new-secret')).status, 303);
    });

    it('refuses a wrong current password, a short or long new one and two that differ, changing nothing', async () => {
      const { owner, client } = await signedIn();
      const cases: Array<[Record<string, string>, string, RegExp]> = [
        [
          { current: 'not-my-password', password: 'long-enough-1', repeat: 'long-enough-1' },
          'current',
          /current password is wrong/,
        ],
        [{ password: 'long-enough-1', repeat: 'long-enough-1' }, 'current', /current password is wrong/],
        [{ current: owner.password, password: 'short', repeat: 'short' }, 'length', /8 to 256 characters/],
        [{ current: owner.password, password: 'x'.repeat(257), repeat: 'x'.repeat(257) }, 'length', /8 to 256/],
        [{ current: owner.password, password: 'long-enough-1', repeat: 'long-enough-2' }, 'mismatch', /differ/],
      ];
      for (const [form, error, message] of cases) {
        const refused = await change(client, form);
        assert.equal(refused.location, `/dashboard/password?error=${error}`);
        assert.match(refused.html, message);
        assert.match(refused.html, /Nothing was changed/);
      }
      assert.equal((await new DashboardClient(server.url).signIn(owner.email, owner.password)).status, 303);
      assert.equal((await new DashboardClient(server.url).signIn(owner.email, 'long-enough-1')).status, 401);
      // Without the session's token the form is refused like every other.
      assert.equal((await client.post('/dashboard/password', { _csrf: 'x', current: owner.password })).status, 403);
      assert.equal((await new DashboardClient(server.url).post('/dashboard/password', {})).status, 401);
    });

    it('warns on every page at 0 credits and under 50, says what to do, and stops once credits are added', async () => {
      const paths = [
        '/dashboard/keys',
        '/dashboard/usage',
        '/dashboard/sla',
        '/dashboard/documents',
        '/dashboard/password',
      ];
      const { owner, client } = await signedIn(0);
      for (const path of paths) {
        const page = await client.get(path);
        assert.equal(page.status, 200, path);
        assert.match(page.html, /class="error credit-banner" role="alert"/, path);
        assert.match(page.html, /no credits left/, path);
        assert.match(page.html, new RegExp(`pvai credits add --account ${owner.accountId} --amount N`), path);
      }
      const add = async (amount: number) =>
        assert.equal(
          (
            await server.request('POST', `/admin/accounts/${owner.accountId}/credits`, {
              admin: true,
              body: { amount },
            })
          ).status,
          200,
        );
      await add(49);
      const low = await client.get('/dashboard/keys');
      assert.match(low.html, /low on credits:<\/strong> 49 left/);
      await add(1);
      for (const path of paths) assert.doesNotMatch((await client.get(path)).html, /credit-banner/, path);
      const rich = await signedIn(1000);
      assert.doesNotMatch((await rich.client.get('/dashboard/keys')).html, /credit-banner/);
    });
  });
}

describe('dashboard: a password change across replicas (postgres)', { skip: postgresOnly() }, () => {
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

  it('a change on one replica signs out the sessions made on the other; the new password works on both', async () => {
    const owner = await accountWithPassword(first, 'startup');
    const onFirst = new DashboardClient(first.url);
    const onSecond = new DashboardClient(second.url);
    assert.equal((await onFirst.signIn(owner.email, owner.password)).status, 303);
    assert.equal((await onSecond.signIn(owner.email, owner.password)).status, 303);
    await onFirst.get('/dashboard/password');
    const changed = await onFirst.post('/dashboard/password', {
      current: owner.password,
      password: 'replica-secret',
      repeat: 'replica-secret',
    });
    assert.equal(changed.location, '/dashboard/password?changed=1');
    assert.equal((await onSecond.get('/dashboard/keys')).location, '/dashboard/sign-in');
    assert.equal((await onFirst.get('/dashboard/keys')).status, 200);
    assert.equal((await new DashboardClient(second.url).signIn(owner.email, 'replica-secret')).status, 303);
  });
});
