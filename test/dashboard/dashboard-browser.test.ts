import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword } from '../support/dashboard.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * The developer dashboard driven in real headless Chromium (playwright-core with Debian's chromium):
 * what an account holder does, by label and button name as a person would, with the keyboard where it
 * matters. Each page is saved as a screenshot in test-output/screenshots/.
 */
/** What the page scripts below use of the DOM (the tests compile without the DOM's types). */
interface ClipboardHost {
  navigator: { clipboard: { readText(): Promise<string> } };
}
interface FormHost {
  document: {
    querySelector(selector: string): { removeAttribute(name: string): void; action: string; submit(): void } | null;
  };
}

const chromiumFound = findChromium();
const skip = 'missing' in chromiumFound ? chromiumFound.missing : false;

describe('developer dashboard in Chromium', { skip }, () => {
  let server: TestServer;
  let upstream: MockUpstream;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let alice: Awaited<ReturnType<typeof accountWithPassword>>;
  let bob: Awaited<ReturnType<typeof accountWithPassword>>;
  let createdKey = '';

  before(async () => {
    upstream = await startMockUpstream();
    const target = (model: string) => ({
      provider: 'openai-compatible' as const,
      baseUrl: upstream.url,
      model,
      timeoutMs: 1500,
      maxRetries: 0,
    });
    server = await startTestServer('sqlite', {
      config: {
        embeddingModel: EMBEDDING_MODEL,
        tiers: { business: { rpm: 10_000 } },
        routing: { 'PV-TURBO': [target('turbo')], 'PV-STANDARD': [target('standard')] },
      },
    });
    alice = await accountWithPassword(server, 'business', 5000);
    bob = await accountWithPassword(server, 'business');
    browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });

  const chat = (apiKey: string, model: string) =>
    fetch(`${server.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(chatBody({ model, skip_cache: true })),
    });
  const models = (apiKey: string) =>
    fetch(`${server.url}/z1/models`, { headers: { Authorization: `Bearer ${apiKey}` } });

  /** Loads a page; fails when the load makes more than 3 requests (the page, its stylesheet, its script). */
  async function load(path: string): Promise<void> {
    const requests: string[] = [];
    const count = (request: { url(): string }) => {
      requests.push(request.url().replace(server.url, ''));
    };
    page.on('request', count);
    await page.goto(server.url + path, { waitUntil: 'networkidle' });
    page.off('request', count);
    assert.ok(requests.length <= 3, `${path}: ${requests.length} requests: ${requests.join(', ')}`);
  }

  it('refuses a wrong password, then signs in by keyboard alone', async () => {
    await load('/dashboard/sign-in');
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /email or the password is wrong/);
    await page.screenshot({ path: screenshotPath('01-sign-in-refused'), fullPage: true });
    // The keyboard: the email is kept and the password field focused; type and press Enter.
    await page.getByLabel('Password').focus();
    await page.keyboard.type(alice.password);
    await page.keyboard.press('Enter');
    await page.waitForURL('**/dashboard/keys');
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'API keys');
  });

  it('creates a key, shows it once with a copy button, and the key works', async () => {
    await load('/dashboard/keys');
    await page.getByLabel('Key name').fill('browser test key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.locator('#new-key-secret');
    await secret.waitFor();
    createdKey = (await secret.textContent())?.trim() ?? '';
    assert.match(createdKey, /^pv_/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as ClipboardHost).navigator.clipboard.readText()),
      createdKey,
    );
    await page.screenshot({ path: screenshotPath('02-key-created'), fullPage: true });
    for (let i = 0; i < 4; i++) assert.equal((await models(createdKey)).status, 200);
    // Chats on two models, one of them failing upstream: the usage and SLA pages have something to show.
    for (const [model, n] of [
      ['PV-TURBO', 5],
      ['PV-STANDARD', 3],
    ] as const) {
      for (let i = 0; i < n; i++) assert.equal((await chat(createdKey, model)).status, 200);
    }
    upstream.script({ kind: 'status', status: 500 });
    assert.equal((await chat(createdKey, 'PV-STANDARD')).status, 502);
  });

  it('shows the requests in the usage chart, with the balance and the windows', async () => {
    await load('/dashboard/usage');
    const chart = page.getByRole('img', { name: /Requests per day by model/ });
    await chart.waitFor();
    assert.ok((await chart.locator('rect').count()) >= 1, 'a bar for today');
    const today = new Date().toISOString().slice(0, 10);
    const figure = page.locator('figure').filter({ hasText: 'Requests per day by model' });
    await page.screenshot({ path: screenshotPath('03-usage'), fullPage: true });
    // And on a phone's width.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: screenshotPath('08-usage-narrow'), fullPage: true });
    await page.setViewportSize({ width: 1200, height: 800 });
    // The numbers behind the chart, a click away (and for screen readers).
    await figure.getByText(/the numbers/).click();
    const cell = figure.getByRole('row', { name: today }).getByRole('cell').first();
    assert.ok(Number(await cell.textContent()) >= 4, 'the 4 requests of the new key without a model');
    await page.getByRole('rowheader', { name: 'PV-TURBO' }).waitFor();
    await page.getByText('Credit balance').waitFor();
    await page.getByText('This minute').waitFor();
  });

  it('shows availability and latency per model against the tier targets', async () => {
    await load('/dashboard/sla?window=1h');
    await page.getByRole('img', { name: /Availability per model/ }).waitFor();
    // 4 and 5 requests: too few for a p95 (dashboard-sla-narrow.test.ts has enough).
    await page.getByText('Latency p95 is shown for a model once it has 20 requests in the window.').waitFor();
    const standard = page.getByRole('row', { name: /PV-STANDARD/ }).last();
    assert.match((await standard.textContent()) ?? '', /75%/, '3 of 4 PV-STANDARD requests answered');
    await page.screenshot({ path: screenshotPath('06-sla'), fullPage: true });
    await page.getByRole('link', { name: 'Last 7 days' }).click();
    await page.waitForURL('**/dashboard/sla?window=7d');
  });

  it('revokes the key with its button, and the key then gets 401', async () => {
    await load('/dashboard/keys');
    await page.screenshot({ path: screenshotPath('04-keys'), fullPage: true });
    await page.getByRole('button', { name: 'Revoke browser test key' }).click();
    await page.getByText('Key revoked').waitFor();
    await page.getByRole('heading', { name: 'Revoked keys' }).waitFor();
    await page.screenshot({ path: screenshotPath('07-key-revoked'), fullPage: true });
    assert.equal((await models(createdKey)).status, 401);
  });

  it('rotates a key: a new key is shown and the old one stops working', async () => {
    await load('/dashboard/keys');
    await page.getByRole('button', { name: 'Rotate default' }).click();
    await page.getByRole('heading', { name: /Key rotated/ }).waitFor();
    const fresh = (await page.locator('#new-key-secret').textContent())?.trim() ?? '';
    assert.equal((await models(fresh)).status, 200);
    assert.equal((await models(alice.apiKey)).status, 401);
  });

  it('refuses a POST without the CSRF token (the form with its token field removed)', async () => {
    await load('/dashboard/keys');
    await page.locator('form[action="/dashboard/keys"] input[name="_csrf"]').evaluate((input) => input.remove());
    await page.getByLabel('Key name').fill('forged');
    const [response] = await Promise.all([
      page.waitForResponse((res) => res.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create key' }).click(),
    ]);
    assert.equal(response.status(), 403);
    await page.getByRole('heading', { name: 'Refused' }).waitFor();
    await load('/dashboard/keys');
    assert.equal(await page.getByText('forged').count(), 0);
  });

  it("cannot revoke another account's key by editing the form's key id", async () => {
    const other = await fetch(`${server.url}/admin/accounts/${bob.accountId}/keys`, {
      headers: { Authorization: 'Bearer test-admin-token-0123456789' },
    });
    const bobKeyId = ((await other.json()) as { data: Array<{ id: string }> }).data[0]?.id ?? '';
    await load('/dashboard/keys');
    await page.evaluate((id) => {
      const form = (globalThis as unknown as FormHost).document.querySelector('form[action$="/revoke"]');
      if (!form) throw new Error('no revoke form');
      form.removeAttribute('data-confirm');
      form.action = `/dashboard/keys/${id}/revoke`;
      form.submit();
    }, bobKeyId);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    assert.equal((await models(bob.apiKey)).status, 200, "Bob's key still works");
  });

  it("lists an end user's documents and deletes one", async () => {
    const key = await fetch(`${server.url}/admin/accounts/${alice.accountId}/keys`, {
      method: 'POST',
      headers: { Authorization: 'Bearer test-admin-token-0123456789', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'uploads' }),
    });
    const apiKey = ((await key.json()) as { api_key: string }).api_key;
    for (const title of ['Garden notes', 'Recipes']) {
      const res = await fetch(`${server.url}/z1/rag/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ user_id: 'carol', title, content: `${title}: a few words about ${title}.` }),
      });
      assert.equal(res.status, 201);
    }
    await load('/dashboard/documents');
    await page.getByLabel('End user').fill('carol');
    await page.getByRole('button', { name: 'Show documents' }).click();
    await page.getByRole('cell', { name: 'Garden notes', exact: true }).waitFor();
    await page.screenshot({ path: screenshotPath('05-documents'), fullPage: true });
    await page.getByRole('button', { name: 'Delete Recipes' }).click();
    await page.getByText('Document deleted.').waitFor();
    assert.equal(await page.getByRole('cell', { name: 'Recipes', exact: true }).count(), 0);
  });

  it("downloads an end user's data, then erases the user after the id is typed out", async () => {
    await load('/dashboard/documents?user=carol');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: "Export this user's data" }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'pvai-export-carol.json');
    const exported = JSON.parse(readFileSync(await download.path(), 'utf8')) as {
      user_id: string;
      documents: Array<{ title: string; text: string }>;
    };
    assert.equal(exported.user_id, 'carol');
    assert.deepEqual(
      exported.documents.map((d) => d.title),
      ['Garden notes'],
    );
    await page.getByRole('link', { name: 'Erase this user' }).click();
    await page.getByRole('heading', { name: /Erase everything about carol/ }).waitFor();
    await page.screenshot({ path: screenshotPath('09-erase-confirm'), fullPage: true });
    // A slip of the hand erases nobody.
    await page.getByLabel('Type the user id to confirm').fill('Carol');
    await page.getByRole('button', { name: 'Erase this user' }).click();
    await page.getByRole('alert').getByText('Nothing was erased').waitFor();
    await page.getByLabel('Type the user id to confirm').fill('carol');
    await page.getByRole('button', { name: 'Erase this user' }).click();
    await page.getByText(/Erased carol: 1 document/).waitFor();
    // Erased, carol is no end user any more: the page says so and offers no second erase.
    await load('/dashboard/documents?user=carol');
    await page.getByText(/No such end user: carol\./).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Erase this user' }).count(), 0);
  });

  it('signs out, and the dashboard asks to sign in again', async () => {
    await load('/dashboard/keys');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/dashboard/sign-in');
    await page.screenshot({ path: screenshotPath('00-sign-in'), fullPage: true });
    await page.goto(`${server.url}/dashboard/usage`);
    assert.match(page.url(), /\/dashboard\/sign-in$/);
  });
});
