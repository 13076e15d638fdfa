import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword } from '../support/dashboard.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** What the page scripts below read of the DOM (the tests compile without the DOM's types). */
interface WidthHost {
  document: { documentElement: { scrollWidth: number; clientWidth: number } };
}

const chromiumFound = findChromium();
const skip = 'missing' in chromiumFound ? chromiumFound.missing : false;

/**
 * The dashboard's Logs page in Chromium: the account's requests newest first, filtered by status, key and end user,
 * paged by "Older"; content logging switched on by a form (Post/Redirect/Get) and the text shown after; another
 * account's requests never; usable at 390 px (the table scrolls inside the page, the page does not). Screenshots in
 * test-output/screenshots/.
 */
describe('the dashboard Logs page in Chromium', { skip }, () => {
  let server: TestServer;
  let upstream: MockUpstream;
  let browser: Browser;
  let page: Page;
  let alice: Awaited<ReturnType<typeof accountWithPassword>>;
  let bob: Awaited<ReturnType<typeof accountWithPassword>>;

  const call = (apiKey: string, path: string, body?: unknown) =>
    fetch(server.url + path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(async (res) => {
      await res.arrayBuffer();
      return res;
    });
  const chat = (apiKey: string, content: string, user = 'ada') =>
    call(apiKey, '/z1/chat/completions', {
      model: 'PV-TURBO',
      user_id: user,
      max_tokens: 8,
      messages: [{ role: 'user', content }],
    });

  before(async () => {
    upstream = await startMockUpstream({ defaultText: 'Apricots are orange.' });
    const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
    server = await startTestServer('sqlite', {
      config: {
        embeddingModel: EMBEDDING_MODEL,
        tiers: { business: { rpm: 10_000, rpd: 100_000 } },
        routing: { 'PV-TURBO': [target] },
      },
    });
    alice = await accountWithPassword(server, 'business', 5000);
    bob = await accountWithPassword(server, 'business', 5000);
    assert.equal((await chat(alice.apiKey, 'What colour are apricots?')).status, 200);
    assert.equal((await chat(bob.apiKey, 'Bob asks about plums.', 'bob-user')).status, 200);
    // 55 more of alice's requests: more than a page of 50.
    for (let i = 0; i < 55; i++) assert.equal((await call(alice.apiKey, '/z1/models')).status, 200);
    assert.equal((await call(alice.apiKey, '/z1/memory')).status, 400, 'an error to filter for');
    browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });

  const rows = () => page.locator('table.logs tbody tr');

  it('lists the account’s requests newest first, pages by Older, and never another account’s', async () => {
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill(alice.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/keys');
    await page.getByRole('link', { name: 'Logs' }).click();
    await page.waitForURL('**/dashboard/logs');
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Logs');
    assert.equal(await rows().count(), 50, 'a page of 50');
    assert.match((await rows().first().textContent()) ?? '', /getMemory|listMemories/, 'the newest first');
    await page.screenshot({ path: screenshotPath('logs-1280'), fullPage: true });

    await page.getByRole('link', { name: 'Older' }).click();
    await page.waitForURL(/after=log_/);
    const older = (await rows().allTextContents()).join('\n');
    assert.match(older, /createChatCompletion/, 'the first request is on the second page');
    assert.match(older, /ada/);
    assert.doesNotMatch(older, /bob-user/, "bob's requests are bob's");
    assert.equal(await page.getByRole('link', { name: 'Older' }).count(), 0, 'the last page');
  });

  it('filters by status and by end user', async () => {
    await page.goto(`${server.url}/dashboard/logs`);
    await page.getByLabel('Status').selectOption('errors');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=errors/);
    assert.equal(await rows().count(), 1);
    assert.match((await rows().first().textContent()) ?? '', /400[\s\S]*INVALID_PARAMETER/);

    await page.goto(`${server.url}/dashboard/logs`);
    await page.getByLabel('End user').fill('ada');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/user=ada/);
    assert.equal(await rows().count(), 1);
    assert.match((await rows().first().textContent()) ?? '', /createChatCompletion/);
  });

  it('turns content logging on by a form, then shows the text of later requests', async () => {
    await page.goto(`${server.url}/dashboard/logs`);
    assert.equal(await page.locator('table.logs details').count(), 0, 'no text by default');
    await page.getByRole('button', { name: 'Turn content logging on' }).click();
    await page.waitForURL(/content=on/);
    await page.getByText('Content logging is on').waitFor();
    // Post/Redirect/Get: the page after the switch is a GET, so a reload posts nothing again.
    await page.reload();
    await page.getByRole('button', { name: 'Turn content logging off' }).waitFor();

    // The key's principal is cached for up to a second: the text is kept from then on.
    let kept = false;
    for (let i = 0; i < 30 && !kept; i++) {
      assert.equal((await chat(alice.apiKey, `Tell me about apricot number ${i}.`)).status, 200);
      await page.goto(`${server.url}/dashboard/logs?user=ada`);
      kept = (await page.locator('table.logs details').count()) > 0;
      if (!kept) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(kept, 'a later request keeps its text');
    const details = page.locator('table.logs details').first();
    await details.locator('summary').click();
    assert.match((await details.textContent()) ?? '', /apricot number[\s\S]*Apricots are orange\./);
    await page.screenshot({ path: screenshotPath('logs-content-1280'), fullPage: true });
  });

  it('is usable at 390 px: the page does not scroll sideways, the filters and the table fit', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.url}/dashboard/logs`);
    const widths = await page.evaluate(() => {
      const root = (globalThis as unknown as WidthHost).document.documentElement;
      return { scroll: root.scrollWidth, client: root.clientWidth };
    });
    assert.ok(widths.scroll <= widths.client, `the page is ${widths.scroll} px wide in ${widths.client}`);
    assert.ok(await page.getByRole('button', { name: 'Filter' }).isVisible());
    const first = rows().first().locator('td').nth(1);
    const box = await first.boundingBox();
    assert.ok(box && box.x + box.width <= 390, 'the status of each row is on screen');
    await page.screenshot({ path: screenshotPath('logs-390'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });
});
