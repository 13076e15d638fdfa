import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountWithPassword, DashboardClient } from '../support/dashboard.js';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The End users page, the Usage page's range and CSV and the Documents upload over plain HTTP, on both
 * databases: what each refuses, and that one account never sees another's end users.
 */
for (const backend of backends()) {
  describe(`dashboard end users, usage range and upload over HTTP (${backend})`, () => {
    let server: TestServer;
    let alice: Awaited<ReturnType<typeof accountWithPassword>>;
    let bob: Awaited<ReturnType<typeof accountWithPassword>>;
    const asAlice = () => signedIn(alice);

    async function signedIn(who: typeof alice): Promise<DashboardClient> {
      const client = new DashboardClient(server.url);
      const res = await client.signIn(who.email, who.password);
      assert.equal(res.status, 303);
      return client;
    }

    /** A multipart POST of the upload form with the client's cookies; `csrf` false leaves the token out. */
    async function upload(client: DashboardClient, file: Blob | undefined, fields: Record<string, string>) {
      await client.get('/dashboard/documents?user=ann');
      const form = new FormData();
      for (const [name, value] of Object.entries({ _csrf: client.csrf, ...fields })) form.set(name, value);
      if (file) form.set('file', file, 'notes.txt');
      const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const res = await fetch(`${server.url}/dashboard/documents/upload`, {
        method: 'POST',
        redirect: 'manual',
        headers: { Cookie: cookie },
        body: form,
      });
      return { status: res.status, location: res.headers.get('location'), html: await res.text() };
    }

    const documentTitles = async (apiKey: string, userId: string) => {
      const res = await server.request<{ data: Array<{ title: string }> }>(
        'GET',
        `/z1/rag/documents?user_id=${userId}`,
        { apiKey },
      );
      return res.body.data.map((d) => d.title).sort();
    };

    before(async () => {
      server = await startTestServer(backend, {
        config: { embeddingModel: EMBEDDING_MODEL, tiers: { business: { rpm: 10_000 } } },
      });
      alice = await accountWithPassword(server, 'business', 1000);
      bob = await accountWithPassword(server, 'business', 1000);
      const remember = (apiKey: string, user_id: string) =>
        server.request('POST', '/z1/memory', { apiKey, body: { user_id, content: `${user_id} likes tea.` } });
      assert.equal((await remember(alice.apiKey, 'ann')).status, 201);
      assert.equal((await remember(bob.apiKey, 'bob-user')).status, 201);
    });
    after(() => server.close());

    it("lists the account's own end users only, each linked to their documents and memory", async () => {
      const mine = await (await asAlice()).get('/dashboard/end-users');
      assert.equal(mine.status, 200);
      assert.match(mine.html, /<a href="\/dashboard\/documents\?user=ann">Documents<\/a>/);
      assert.match(mine.html, /<a href="\/dashboard\/memory\?user=ann">Memory<\/a>/);
      assert.ok(!mine.html.includes('bob-user'));
      const theirs = await (await signedIn(bob)).get('/dashboard/end-users?account_id=x');
      assert.match(theirs.html, /bob-user/);
      assert.ok(!theirs.html.includes('>ann<') && !theirs.html.includes('user=ann'));
      const gone = await (await asAlice()).get('/dashboard/end-users?after=bob-user');
      assert.equal(gone.status, 404, "another account's end user is no cursor here");
    });

    it('refuses an unreadable range, an inverted one, one over a year and an unknown breakdown', async () => {
      const client = await asAlice();
      for (const query of [
        'start=2026-02-30&end=2026-03-01',
        'start=2026-03-02&end=2026-03-01',
        'start=2025-01-01&end=2026-03-01',
        'start=yesterday&end=2026-03-01',
      ]) {
        const res = await client.get(`/dashboard/usage?${query}`);
        assert.equal(res.status, 400, query);
        assert.match(res.html, /role="alert"/);
        assert.equal((await client.get(`/dashboard/usage.csv?group_by=day&${query}`)).status, 400, query);
      }
      assert.equal((await client.get('/dashboard/usage.csv?group_by=week&days=7')).status, 400);
      const page = await client.get('/dashboard/usage?start=2026-03-01&end=2026-03-01');
      assert.equal(page.status, 200);
      assert.match(page.html, /No requests from 2026-03-01 to 2026-03-01\./);
      const csv = await client.get('/dashboard/usage.csv?group_by=user&days=7');
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="pvai-usage-user-/);
      assert.match(csv.html, /^key,requests,credits,prompt_tokens,completion_tokens,total_tokens\r\nann,1,/);
    });

    it('uploads a file as the API stores it, answering 303; refuses no token, no file and an unreadable one', async () => {
      const client = await asAlice();
      const text = new Blob(['Ann opens the shop at nine.'], { type: 'text/plain' });
      const withoutToken = await upload(client, text, { user: 'ann', _csrf: '' });
      assert.equal(withoutToken.status, 403);
      const noFile = await upload(client, undefined, { user: 'ann' });
      assert.equal(noFile.status, 400);
      assert.match(noFile.html, /Choose a file to upload/);
      const png = new Blob([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')], { type: 'image/png' });
      const image = await upload(client, png, { user: 'ann' });
      assert.equal(image.status, 415);
      assert.match(image.html, /Supported files are txt, md, html, pdf and docx/);
      assert.deepEqual(await documentTitles(alice.apiKey, 'ann'), [], 'nothing refused was stored');

      const stored = await upload(client, text, { user: 'ann', title: 'Shop hours' });
      assert.equal(stored.status, 303, stored.html);
      assert.equal(stored.location, '/dashboard/documents?user=ann&uploaded=1');
      assert.deepEqual(await documentTitles(alice.apiKey, 'ann'), ['Shop hours']);
      assert.deepEqual(await documentTitles(bob.apiKey, 'ann'), [], "Bob's ann is another end user");
      const list = await (await asAlice()).get('/dashboard/end-users');
      assert.match(list.html, /ann<\/code><\/th>\s*<td class="num">1<\/td><td class="num">1<\/td>/);
    });
  });
}
