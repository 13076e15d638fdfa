import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword } from '../support/dashboard.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The dashboard acts on exactly the end user it is given, as the API does: `" ws-X"` (a leading space) and
 * `"ws-X"` are two end users. Driven in real Chromium: the Documents page shows the spaced id's own documents with
 * a visible marker, and erasing it erases that user alone.
 */
const chromiumFound = findChromium();
const skip = 'missing' in chromiumFound ? chromiumFound.missing : false;

const SPACED = ' ws-X';
const PLAIN = 'ws-X';

describe('dashboard: end user ids exactly as given, in Chromium', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let owner: Awaited<ReturnType<typeof accountWithPassword>>;

  const documents = async (userId: string) => {
    const res = await fetch(`${server.url}/z1/rag/documents?user_id=${encodeURIComponent(userId)}`, {
      headers: { Authorization: `Bearer ${owner.apiKey}` },
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { data: Array<{ title: string }> }).data.map((d) => d.title);
  };

  before(async () => {
    server = await startTestServer('sqlite', {
      config: { embeddingModel: EMBEDDING_MODEL, tiers: { business: { rpm: 10_000 } } },
    });
    owner = await accountWithPassword(server, 'business', 5000);
    for (const [userId, title] of [
      [SPACED, 'Spaced notes'],
      [PLAIN, 'Plain notes'],
    ] as const) {
      const res = await fetch(`${server.url}/z1/rag/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ user_id: userId, title, content: `${title}: a few words for ${title}.` }),
      });
      assert.equal(res.status, 201);
    }
    assert.deepEqual(await documents(SPACED), ['Spaced notes']);
    assert.deepEqual(await documents(PLAIN), ['Plain notes']);
    browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/keys');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the spaced id's own documents, with a visible marker of its spaces", async () => {
    await page.goto(`${server.url}/dashboard/documents`);
    await page.getByLabel('End user').fill(SPACED);
    await page.getByRole('button', { name: 'Show documents' }).click();
    await page.getByRole('cell', { name: 'Spaced notes', exact: true }).waitFor();
    assert.equal(await page.getByRole('cell', { name: 'Plain notes', exact: true }).count(), 0, "not ws-X's");
    const heading = page.getByRole('heading', { name: /Documents of/ });
    assert.equal(await heading.locator('code').textContent(), '␣ws-X');
    assert.match((await heading.textContent()) ?? '', /has leading\/trailing spaces/);
    // The field keeps the id as typed, so that showing it again names the same user.
    assert.equal(await page.getByLabel('End user').inputValue(), SPACED);
    await page.screenshot({ path: screenshotPath('10-documents-spaced-user'), fullPage: true });
    // The plain id shows no marker.
    await page.goto(`${server.url}/dashboard/documents?user=${PLAIN}`);
    await page.getByRole('cell', { name: 'Plain notes', exact: true }).waitFor();
    assert.equal(await page.getByText('has leading/trailing spaces').count(), 0);
  });

  it("erases exactly ' ws-X' and leaves 'ws-X' whole", async () => {
    await page.goto(`${server.url}/dashboard/documents?user=${encodeURIComponent(SPACED)}`);
    await page.getByRole('link', { name: 'Erase this user' }).click();
    const title = page.getByRole('heading', { name: /Erase everything about/ });
    await title.waitFor();
    assert.equal(await title.locator('code').textContent(), '␣ws-X');
    // The id without its space is another user: nothing is erased.
    await page.getByLabel('Type the user id to confirm').fill(PLAIN);
    await page.getByRole('button', { name: 'Erase this user' }).click();
    await page.getByRole('alert').getByText('Nothing was erased').waitFor();
    await page.getByLabel('Type the user id to confirm').fill(SPACED);
    await page.getByRole('button', { name: 'Erase this user' }).click();
    await page.getByText(/: 1 document/).waitFor();
    assert.deepEqual(await documents(SPACED), [], "' ws-X' is erased");
    assert.deepEqual(await documents(PLAIN), ['Plain notes'], "'ws-X' keeps its data");
  });

  it('refuses an id the API refuses instead of cutting or trimming it', async () => {
    const long = 'u'.repeat(257);
    const res = await page.goto(`${server.url}/dashboard/documents?user=${long}`);
    assert.equal(res?.status(), 400);
    await page.getByText('user must NOT have more than 256 characters').waitFor();
    const erase = await page.goto(`${server.url}/dashboard/users/erase?user=${encodeURIComponent('tab\there')}`);
    assert.equal(erase?.status(), 400);
    await page.getByText(/must not contain control characters/).waitFor();
  });
});
