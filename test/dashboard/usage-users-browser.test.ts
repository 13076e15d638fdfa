import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword } from '../support/dashboard.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The Usage page's range picker, breakdowns and CSV, the End users list and the Documents and Memory pages it
 * leads to (upload included), driven in Chromium at 1280 and 390 px, with screenshots of each.
 */
const chromiumFound = findChromium();
const skip = 'missing' in chromiumFound ? chromiumFound.missing : false;
const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('usage by range and end users in Chromium', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let alice: Awaited<ReturnType<typeof accountWithPassword>>;
  const api = (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${server.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { Authorization: `Bearer ${alice.apiKey}`, 'Content-Type': 'application/json' },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });

  /** Both widths: the page as it is at 1280 px, then at 390 px (a phone), back to 1280. */
  async function screenshots(name: string): Promise<void> {
    await page.screenshot({ path: screenshotPath(`${name}-1280`), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document;
      return d.documentElement.scrollWidth;
    });
    await page.screenshot({ path: screenshotPath(`${name}-390`), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    assert.ok(overflow <= 390 + 1, `${name}: the page is ${overflow} px wide at 390 px`);
  }

  before(async () => {
    server = await startTestServer('sqlite', {
      config: { embeddingModel: EMBEDDING_MODEL, tiers: { business: { rpm: 10_000 } } },
    });
    alice = await accountWithPassword(server, 'business', 5000);
    // Today: ann and bob through the API (a document, a memory, requests); 20 days ago: rows of another model.
    assert.equal((await api('/z1/memory?user_id=ann')).status, 200);
    const doc = await api('/z1/rag/documents', {
      method: 'POST',
      body: { user_id: 'ann', title: 'Ann handbook', content: 'Ann opens the shop at nine.' },
    });
    assert.equal(doc.status, 201);
    const memory = await api('/z1/memory', { method: 'POST', body: { user_id: 'bob', content: 'Bob likes tea.' } });
    assert.equal(memory.status, 201);
    const old = Date.now() - 20 * DAY;
    for (let i = 0; i < 4; i++) {
      await server.running.runtime.usage.record({
        accountId: alice.accountId,
        keyId: null,
        requestId: `req_old_${i}`,
        endpoint: 'createChatCompletion',
        model: 'PV-CODEX',
        userId: 'old-user',
        status: 200,
        promptTokens: 10,
        completionTokens: 5,
        credits: 2,
        latencyMs: 100,
        cached: false,
        createdAt: old + i,
      });
    }
    browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill(alice.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/keys');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('picks a range by preset and by dates, with the breakdowns by model, key and end user', async () => {
    await page.goto(`${server.url}/dashboard/usage`);
    for (const name of ['By model', 'By API key', 'By end user']) await page.getByRole('heading', { name }).waitFor();
    const byModel = page.locator('section[aria-labelledby="by-model"]');
    assert.equal(await byModel.getByText('PV-CODEX').count(), 1, 'the last 30 days hold the old rows');
    await page.getByRole('link', { name: 'Last 7 days' }).click();
    await page.waitForURL('**/dashboard/usage?days=7');
    assert.equal(await byModel.getByText('PV-CODEX').count(), 0, 'the last 7 days do not');
    const byUser = page.locator('section[aria-labelledby="by-user"]');
    await byUser.getByRole('link', { name: 'ann' }).waitFor();
    await screenshots('20-usage-7-days');

    await page.getByLabel('From').fill(day(Date.now() - 25 * DAY));
    await page.getByLabel('To (included)').fill(day(Date.now() - 15 * DAY));
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/start=\d{4}-\d{2}-\d{2}&end=/);
    await byModel.getByText('PV-CODEX').waitFor();
    assert.equal(await byUser.getByRole('link', { name: 'ann' }).count(), 0, 'ann is not in that range');
  });

  it('downloads the breakdown by end user as the CSV the API gives', async () => {
    await page.goto(`${server.url}/dashboard/usage?days=30`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('section[aria-labelledby="by-user"]').getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    const first = day(Date.now() - 29 * DAY);
    const end = day(Date.now() + DAY);
    assert.equal(download.suggestedFilename(), `pvai-usage-user-${first}-${end}.csv`);
    const csv = readFileSync(await download.path(), 'utf8');
    const fromApi = await api(`/z1/usage?group_by=user&start=${first}&end=${end}&format=csv`);
    // The API's own request since is in no user's group: the CSVs agree on every end user's row.
    const named = (text: string) => text.split('\r\n').filter((line) => line && !line.startsWith(','));
    assert.deepEqual(named(csv), named(await fromApi.text()));
    assert.match(csv, /^key,requests,credits,prompt_tokens,completion_tokens,total_tokens\r\n/);
    assert.match(csv, /\r\nold-user,4,8,40,20,60\r\n/);
  });

  it('lists the end users, and leads to their documents (with an upload) and their memory', async () => {
    await page.goto(`${server.url}/dashboard/end-users`);
    const ann = page.getByRole('row', { name: /ann/ });
    await ann.waitFor();
    assert.match((await ann.textContent()) ?? '', /ann\s*1\s*0\s*\d+/);
    await screenshots('21-end-users');
    await ann.getByRole('link', { name: 'Documents' }).click();
    await page.waitForURL('**/dashboard/documents?user=ann');
    await page.getByRole('cell', { name: 'Ann handbook', exact: true }).waitFor();

    await page.getByLabel('File (txt, md, html, pdf or docx)').setInputFiles({
      name: 'opening-hours.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('The shop opens at nine and closes at six.'),
    });
    await page.getByLabel('Title (optional)').fill('Opening hours');
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('Document uploaded.').waitFor();
    assert.match(page.url(), /\/dashboard\/documents\?user=ann&uploaded=1$/, 'Post/Redirect/Get');
    await page.getByRole('cell', { name: 'Opening hours', exact: true }).waitFor();
    await page.reload();
    assert.equal(
      await page.getByRole('cell', { name: 'Opening hours', exact: true }).count(),
      1,
      'a reload uploads nothing',
    );
    const listed = (await (await api('/z1/rag/documents?user_id=ann')).json()) as { data: Array<{ title: string }> };
    assert.deepEqual(listed.data.map((d) => d.title).sort(), ['Ann handbook', 'Opening hours']);
    await screenshots('22-documents-upload');

    await page.goto(`${server.url}/dashboard/end-users`);
    await page.getByRole('row', { name: /bob/ }).getByRole('link', { name: 'Memory' }).click();
    await page.waitForURL('**/dashboard/memory?user=bob');
    await page.getByRole('cell', { name: 'Bob likes tea.', exact: true }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Memory', exact: true }).getAttribute('aria-current'), 'page');
    await screenshots('23-memory');
  });

  it('says an unknown end user does not exist, and offers no erase', async () => {
    await page.goto(`${server.url}/dashboard/documents`);
    await page.getByLabel('End user').fill('an-typo');
    await page.getByRole('button', { name: 'Show documents' }).click();
    await page
      .getByRole('alert')
      .getByText(/No such end user: an-typo/)
      .waitFor();
    assert.equal(await page.getByRole('link', { name: 'Erase this user' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Upload' }).count(), 0);
    await screenshots('24-unknown-end-user');
    await page.goto(`${server.url}/dashboard/users/erase?user=an-typo`);
    await page.getByText(/No such end user/).waitFor();
    assert.equal(await page.getByLabel('Type the user id to confirm').count(), 0);
  });
});
