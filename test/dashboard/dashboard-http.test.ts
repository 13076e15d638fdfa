import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { accountWithPassword, DashboardClient, revocableKeyIds, shownKey } from '../support/dashboard.js';
import { backends, postgresOnly } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { manualClock, startReplica, startTestServer, type TestServer } from '../support/server.js';

/**
 * The developer dashboard over plain HTTP (no browser): sign-in, sessions, CSRF, throttling, and that
 * one account can never see or act on another's keys, usage or documents, even with edited ids.
 */
for (const backend of backends()) {
  describe(`developer dashboard over HTTP (${backend})`, () => {
    let server: TestServer;
    let alice: Awaited<ReturnType<typeof accountWithPassword>>;
    let bob: Awaited<ReturnType<typeof accountWithPassword>>;

    before(async () => {
      server = await startTestServer(backend, {
        config: { embeddingModel: EMBEDDING_MODEL, tiers: { business: { rpm: 10_000 } } },
      });
      alice = await accountWithPassword(server, 'business');
      bob = await accountWithPassword(server, 'business');
    });
    after(() => server.close());

    const models = (apiKey: string) => server.request('GET', '/z1/models', { apiKey });

    it('signs in with email and password into an HttpOnly, SameSite=Strict session cookie', async () => {
      const client = new DashboardClient(server.url);
      const page = await client.get('/dashboard/sign-in');
      assert.equal(page.status, 200);
      assert.match(page.html, /<label for="email">Email<\/label>/);
      assert.match(page.html, /<label for="password">Password<\/label>/);
      assert.match(page.html, /<button type="submit">Sign in<\/button>/);
      const res = await fetch(`${server.url}/dashboard/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        },
        body: new URLSearchParams({ _csrf: client.csrf, email: alice.email.toUpperCase(), password: alice.password }),
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/dashboard/keys');
      const session = res.headers.getSetCookie().find((c) => c.startsWith('pvai_session='));
      assert.ok(session, 'a session cookie');
      assert.match(session, /httponly/i);
      assert.match(session, /samesite=strict/i);
      assert.match(session, /path=\/dashboard/i);
    });

    it('refuses a wrong password and an unknown email alike, with no session', async () => {
      const client = new DashboardClient(server.url);
      const wrong = await client.signIn(alice.email, 'not-the-password');
      assert.equal(wrong.status, 401);
      assert.match(wrong.html, /The email or the password is wrong/);
      assert.equal(client.cookies.has('pvai_session'), false);
      const unknown = await client.signIn('nobody@example.com', 'whatever-password');
      assert.equal(unknown.status, 401);
      assert.equal((await client.get('/dashboard/keys')).location, '/dashboard/sign-in');
    });

    it('refuses a state-changing POST without the CSRF token, with a wrong one, or from another origin', async () => {
      const client = new DashboardClient(server.url);
      assert.equal((await client.signIn(alice.email, alice.password)).status, 303);
      await client.get('/dashboard/keys');
      const before = revocableKeyIds((await client.get('/dashboard/keys')).html).length;
      const none = await client.post('/dashboard/keys', { _csrf: '', name: 'no token' });
      assert.equal(none.status, 403);
      const wrong = await client.post('/dashboard/keys', { _csrf: 'x'.repeat(43), name: 'wrong token' });
      assert.equal(wrong.status, 403);
      const foreign = await client.post('/dashboard/keys', { name: 'cross-site' }, { Origin: 'https://evil.example' });
      assert.equal(foreign.status, 403);
      // The sign-in form too: a POST without its token (login CSRF) signs no one in.
      const fresh = new DashboardClient(server.url);
      const login = await fresh.post('/dashboard/sign-in', { email: alice.email, password: alice.password });
      assert.equal(login.status, 403);
      assert.equal(fresh.cookies.has('pvai_session'), false);
      assert.equal(revocableKeyIds((await client.get('/dashboard/keys')).html).length, before, 'no key was created');
    });

    it('creates a key shown once that works, and revokes it so that it gets 401', async () => {
      const client = new DashboardClient(server.url);
      await client.signIn(alice.email, alice.password);
      await client.get('/dashboard/keys');
      const created = await client.post('/dashboard/keys', { name: 'ci server' });
      assert.equal(created.status, 303, 'Post/Redirect/Get: a reload cannot create a second key');
      assert.equal(created.location, '/dashboard/keys#new-key');
      const secret = shownKey((await client.get('/dashboard/keys')).html);
      assert.ok(secret, 'the plaintext key is shown');
      assert.equal((await models(secret)).status, 200);
      const again = await client.get('/dashboard/keys');
      assert.equal(shownKey(again.html), undefined, 'shown once only');
      assert.ok(!again.html.includes(secret));
      const id = revocableKeyIds(again.html).at(-1) ?? '';
      const revoked = await client.post(`/dashboard/keys/${id}/revoke`);
      assert.equal(revoked.status, 303);
      assert.equal((await models(secret)).status, 401);
    });

    it('rotates a key: the new one works, the old one gets 401', async () => {
      const client = new DashboardClient(server.url);
      await client.signIn(alice.email, alice.password);
      await client.get('/dashboard/keys');
      await client.post('/dashboard/keys', { name: 'to rotate' });
      const old = shownKey((await client.get('/dashboard/keys')).html) ?? '';
      const id = revocableKeyIds(client.lastHtml ?? '').at(-1) ?? '';
      const rotated = await client.post(`/dashboard/keys/${id}/rotate`);
      assert.equal(rotated.status, 303);
      const fresh = shownKey((await client.get('/dashboard/keys')).html) ?? '';
      assert.notEqual(fresh, old);
      assert.equal((await models(fresh)).status, 200);
      assert.equal((await models(old)).status, 401);
    });

    it("never lets one account see, revoke or rotate another's keys, even with edited ids", async () => {
      const asBob = new DashboardClient(server.url);
      await asBob.signIn(bob.email, bob.password);
      const bobKeys = revocableKeyIds((await asBob.get('/dashboard/keys')).html);
      assert.ok(bobKeys.length >= 1);
      const asAlice = new DashboardClient(server.url);
      await asAlice.signIn(alice.email, alice.password);
      const alicePage = await asAlice.get('/dashboard/keys');
      for (const id of bobKeys) assert.ok(!alicePage.html.includes(id), "Bob's key ids are not on Alice's page");
      assert.ok(!alicePage.html.includes(bob.apiKey.slice(0, 12)), "nor Bob's key prefixes");
      for (const id of bobKeys) {
        assert.equal((await asAlice.post(`/dashboard/keys/${id}/revoke`)).status, 404);
        assert.equal((await asAlice.post(`/dashboard/keys/${id}/rotate`)).status, 404);
      }
      assert.equal((await models(bob.apiKey)).status, 200, "Bob's key still works");
      // Bob's own CSRF token does not work in Alice's session either.
      assert.equal((await asAlice.post('/dashboard/keys', { _csrf: asBob.csrf, name: 'x' })).status, 403);
    });

    it("shows an account its own usage from the rollup, and never another's", async () => {
      for (let i = 0; i < 3; i++) assert.equal((await models(bob.apiKey)).status, 200);
      const asBob = new DashboardClient(server.url);
      await asBob.signIn(bob.email, bob.password);
      const mine = await asBob.get('/dashboard/usage');
      assert.equal(mine.status, 200);
      assert.match(mine.html, /Requests per day by model/);
      const today = new Date().toISOString().slice(0, 10);
      const bobRequests = Number(new RegExp(`<th scope="row">${today}</th><td>(\\d+)</td>`).exec(mine.html)?.[1]);
      assert.ok(bobRequests >= 3, `Bob's requests today: ${bobRequests}`);
      const rows = await server.usageRows<{ n: number }>(
        'SELECT sum(requests) AS n FROM usage_hourly WHERE account_id = $1',
        [bob.accountId],
      );
      assert.ok(Number(rows[0]?.n) >= 3, 'the rollup holds them');
      const fresh = await accountWithPassword(server, 'free');
      const asFresh = new DashboardClient(server.url);
      await asFresh.signIn(fresh.email, fresh.password);
      const theirs = await asFresh.get(`/dashboard/usage?account=${bob.accountId}&account_id=${bob.accountId}`);
      assert.match(theirs.html, /No requests from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\./);
      assert.ok(!theirs.html.includes(bob.accountId));
    });

    it("lists and deletes an end user's documents and memories, never another account's", async () => {
      const upload = await server.request<{ id: string }>('POST', '/z1/rag/documents', {
        apiKey: bob.apiKey,
        body: { user_id: 'carol', title: 'Carol notes', content: 'Carol keeps her notes about the garden here.' },
      });
      assert.equal(upload.status, 201, upload.text);
      const remembered = await server.request<{ id: string }>('POST', '/z1/memory', {
        apiKey: bob.apiKey,
        body: { user_id: 'carol', content: 'Grows heirloom tomatoes.' },
      });
      assert.equal(remembered.status, 201, remembered.text);
      const asAlice = new DashboardClient(server.url);
      await asAlice.signIn(alice.email, alice.password);
      // Bob's carol is no end user of Alice's: said so, with nothing to delete, export or erase.
      for (const page of ['documents', 'memory']) {
        const alicesView = await asAlice.get(`/dashboard/${page}?user=carol`);
        assert.equal(alicesView.status, 404);
        assert.match(alicesView.html, /No such end user: <code>carol<\/code>/);
        assert.ok(!alicesView.html.includes('Erase this user') && !alicesView.html.includes('Carol'));
      }
      assert.equal(
        (await asAlice.post(`/dashboard/memory/${remembered.body.id}/delete`, { user: 'carol' })).status,
        404,
      );
      assert.equal(
        (await asAlice.post(`/dashboard/documents/${upload.body.id}/delete`, { user: 'carol' })).status,
        404,
      );
      const asBob = new DashboardClient(server.url);
      await asBob.signIn(bob.email, bob.password);
      const bobsView = await asBob.get('/dashboard/documents?user=carol');
      assert.match(bobsView.html, /Carol notes/);
      assert.match((await asBob.get('/dashboard/memory?user=carol')).html, /Grows heirloom tomatoes\./);
      const forgot = await asBob.post(`/dashboard/memory/${remembered.body.id}/delete`, { user: 'carol' });
      assert.equal(forgot.status, 303);
      assert.equal(forgot.headers.get('location'), '/dashboard/memory?user=carol&forgot=1');
      assert.match((await asBob.get('/dashboard/memory?user=carol')).html, /No memories for <code>carol<\/code>/);
      const deleted = await asBob.post(`/dashboard/documents/${upload.body.id}/delete`, { user: 'carol' });
      assert.equal(deleted.status, 303);
      assert.match((await asBob.get('/dashboard/documents?user=carol')).html, /No documents for <code>carol<\/code>/);
    });

    it("exports and erases an end user's data from their page, behind a typed confirmation, in its own account only", async () => {
      for (const [key, content] of [
        [bob.apiKey, 'Dave rows on the river.'],
        [alice.apiKey, "Alice's Dave has a cat."],
      ] as const) {
        const res = await server.request('POST', '/z1/memory', { apiKey: key, body: { user_id: 'dave', content } });
        assert.equal(res.status, 201, res.text);
      }
      const doc = await server.request('POST', '/z1/rag/documents', {
        apiKey: bob.apiKey,
        body: { user_id: 'dave', title: 'Dave log', content: 'Dave logs his training here.' },
      });
      assert.equal(doc.status, 201, doc.text);
      const asBob = new DashboardClient(server.url);
      await asBob.signIn(bob.email, bob.password);
      const userPage = await asBob.get('/dashboard/documents?user=dave');
      assert.match(userPage.html, /href="\/dashboard\/users\/export\?user=dave" download>Export this user's data</);
      assert.match(userPage.html, /href="\/dashboard\/users\/erase\?user=dave">Erase this user</);

      const exported = await asBob.get('/dashboard/users/export?user=dave');
      assert.equal(exported.status, 200);
      assert.match(exported.headers.get('content-disposition') ?? '', /^attachment; filename="pvai-export-dave\.json"/);
      assert.equal(exported.headers.get('cache-control'), 'no-store');
      const body = JSON.parse(exported.html) as { user_id: string; memories: unknown[]; documents: unknown[] };
      assert.equal(body.user_id, 'dave');
      assert.equal(body.memories.length, 1);
      assert.equal(body.documents.length, 1);
      assert.ok(exported.html.includes('Dave rows on the river.') && !exported.html.includes('cat'), "Bob's dave only");

      const confirm = await asBob.get('/dashboard/users/erase?user=dave');
      assert.equal(confirm.status, 200);
      assert.match(confirm.html, /<li>1 document<\/li><li>1 memory<\/li>/);
      assert.match(confirm.html, /<label for="confirm">Type the user id to confirm<\/label>/);
      const token = asBob.csrf;
      // Refused: without the session's token, from another origin, or with the id mistyped. Nothing is erased.
      assert.equal(
        (await asBob.post('/dashboard/users/erase', { _csrf: '', user: 'dave', confirm: 'dave' })).status,
        403,
      );
      const foreign = await asBob.post(
        '/dashboard/users/erase',
        { user: 'dave', confirm: 'dave' },
        { Origin: 'https://evil.example' },
      );
      assert.equal(foreign.status, 403);
      const mistyped = await asBob.post('/dashboard/users/erase', { _csrf: token, user: 'dave', confirm: 'Dave' });
      assert.equal(mistyped.status, 303);
      assert.equal(mistyped.location, '/dashboard/users/erase?user=dave&mismatch=1');
      assert.match((await asBob.get(mistyped.location ?? '')).html, /does not match\. Nothing was erased/);
      assert.match((await asBob.get('/dashboard/memory?user=dave')).html, /Dave rows on the river\./);

      // Alice erasing "dave" erases her own dave only.
      const asAlice = new DashboardClient(server.url);
      await asAlice.signIn(alice.email, alice.password);
      await asAlice.get('/dashboard/users/erase?user=dave');
      const hers = await asAlice.post('/dashboard/users/erase', { user: 'dave', confirm: 'dave' });
      assert.equal(hers.status, 303, 'Post/Redirect/Get: a reload erases nothing again');
      assert.match((await asAlice.get(hers.location ?? '')).html, /0 documents\s+and 1 memory deleted/);
      assert.match((await asBob.get('/dashboard/documents?user=dave')).html, /Dave log/);

      await asBob.get('/dashboard/users/erase?user=dave');
      const posted = await asBob.post('/dashboard/users/erase', { user: 'dave', confirm: 'dave' });
      assert.equal(posted.status, 303);
      const erased = await asBob.get(posted.location ?? '');
      assert.equal(erased.status, 200);
      assert.match(erased.html, /Erased <code>dave<\/code>: 1 document\s+and 1 memory deleted; \d+ usage rows? kept/);
      // Erased, dave is no end user any more: the pages say so and offer no second erase.
      const after = await asBob.get('/dashboard/documents?user=dave');
      assert.equal(after.status, 404);
      assert.match(after.html, /No such end user: <code>dave<\/code>/);
      assert.match((await asBob.get('/dashboard/memory?user=dave')).html, /No such end user: <code>dave<\/code>/);
      assert.equal((await asBob.get('/dashboard/users/erase?user=dave')).status, 404);
      const empty = JSON.parse((await asBob.get('/dashboard/users/export?user=dave')).html) as { memories: unknown[] };
      assert.deepEqual(empty.memories, []);
      const signedOut = await new DashboardClient(server.url).get('/dashboard/users/export?user=dave');
      assert.equal(signedOut.location, '/dashboard/sign-in');
    });

    it('signs out: the session ends on the server, the old cookie no longer works', async () => {
      const client = new DashboardClient(server.url);
      await client.signIn(alice.email, alice.password);
      await client.get('/dashboard/keys');
      const stolen = client.cookies.get('pvai_session') ?? '';
      const out = await client.post('/dashboard/sign-out');
      assert.equal(out.status, 303);
      const replay = await fetch(`${server.url}/dashboard/keys`, {
        redirect: 'manual',
        headers: { Cookie: `pvai_session=${stolen}` },
      });
      assert.equal(replay.status, 303);
      assert.equal(replay.headers.get('location'), '/dashboard/sign-in');
    });

    it('throttles sign-in per email and address: after 5 failures from one address even the right password waits', async () => {
      const victim = await accountWithPassword(server, 'free');
      const client = new DashboardClient(server.url);
      for (let i = 0; i < 5; i++) assert.equal((await client.signIn(victim.email, 'wrong-password')).status, 401);
      const blocked = await client.signIn(victim.email, victim.password);
      assert.equal(blocked.status, 429);
      assert.match(blocked.html, /Too many failed sign-ins/);
      assert.equal(client.cookies.has('pvai_session'), false);
    });

    it('shows the SLA page only to tiers that have SLA monitoring', async () => {
      const free = await accountWithPassword(server, 'free');
      const asFree = new DashboardClient(server.url);
      await asFree.signIn(free.email, free.password);
      const page = await asFree.get('/dashboard/sla');
      assert.equal(page.status, 200);
      assert.match(page.html, /SLA monitoring is not part of the free tier/);
      assert.doesNotMatch(page.html, /Availability per model/);
      const asAlice = new DashboardClient(server.url);
      await asAlice.signIn(alice.email, alice.password);
      assert.match((await asAlice.get('/dashboard/sla?window=7d')).html, /Last 7 days/);
    });

    it('serves its pages in at most 3 requests: the page, its stylesheet, its script', async () => {
      const client = new DashboardClient(server.url);
      await client.signIn(alice.email, alice.password);
      const anonymous = new DashboardClient(server.url);
      for (const path of ['/dashboard/keys', '/dashboard/usage', '/dashboard/documents', '/dashboard/sign-in']) {
        const page = await (path.endsWith('sign-in') ? anonymous : client).get(path);
        assert.equal(page.status, 200, `${path}: ${page.status} ${page.location}`);
        const refs = [...page.html.matchAll(/(?:src|href)="(\/[^"]*)"/g)]
          .map((m) => m[1])
          .filter((p) => p?.startsWith('/dashboard/assets/'));
        assert.deepEqual(refs.sort(), ['/dashboard/assets/dashboard.css', '/dashboard/assets/dashboard.js']);
        assert.doesNotMatch(page.html, /https?:\/\//, `${path} loads nothing from elsewhere`);
      }
      const css = await fetch(`${server.url}/dashboard/assets/dashboard.css`);
      assert.equal(css.status, 200);
      assert.match(css.headers.get('content-type') ?? '', /text\/css/);
    });
  });
}

describe('developer dashboard sessions expire', () => {
  const clock = manualClock(Date.now());
  let server: TestServer;

  before(async () => {
    server = await startTestServer('sqlite', { clock });
  });
  after(() => server.close());

  it('asks to sign in again 12 hours after signing in, whatever was done meanwhile', async () => {
    const owner = await accountWithPassword(server, 'startup');
    const client = new DashboardClient(server.url);
    assert.equal((await client.signIn(owner.email, owner.password)).status, 303);
    clock.advance(11 * 3_600_000);
    assert.equal((await client.get('/dashboard/keys')).status, 200);
    clock.advance(3_600_000 + 1);
    const expired = await client.get('/dashboard/keys');
    assert.equal(expired.status, 303);
    assert.equal(expired.location, '/dashboard/sign-in');
    assert.equal((await client.post('/dashboard/keys', { name: 'late' })).status, 401);
  });
});

describe('developer dashboard sessions across replicas (postgres)', { skip: postgresOnly() }, () => {
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

  it('a session made on one replica works on the other, and signing out on one ends it on both', async () => {
    const owner = await accountWithPassword(first, 'startup');
    const onFirst = new DashboardClient(first.url);
    assert.equal((await onFirst.signIn(owner.email, owner.password)).status, 303);
    const onSecond = new DashboardClient(second.url);
    for (const [name, value] of onFirst.cookies) onSecond.cookies.set(name, value);
    const page = await onSecond.get('/dashboard/keys');
    assert.equal(page.status, 200);
    assert.match(page.html, new RegExp(owner.email));
    assert.equal((await onSecond.post('/dashboard/sign-out')).status, 303);
    assert.equal((await onFirst.get('/dashboard/keys')).location, '/dashboard/sign-in');
  });
});
