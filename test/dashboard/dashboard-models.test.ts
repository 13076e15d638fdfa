import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword, DashboardClient } from '../support/dashboard.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** What the Models page's script reads of the DOM (the tests compile without the DOM's types). */
interface WidthHost {
  document: { documentElement: { scrollWidth: number } };
  innerWidth: number;
}

const chromiumFound = findChromium();

/**
 * The dashboard's Models page (issue 57, honest tiers): what serves each model now and what it is good for, beside
 * what the tier sells it as, and the configured aliases; over HTTP, and in Chromium at 1280 and 390 px.
 */
describe("the dashboard's Models page", () => {
  let upstream: MockUpstream;
  let server: TestServer;
  let free: Awaited<ReturnType<typeof accountWithPassword>>;

  before(async () => {
    upstream = await startMockUpstream();
    server = await startTestServer('sqlite', {
      config: {
        modelAliases: { 'gpt-4o-mini': 'PV-TURBO' },
        routing: {
          'PV-ADVANCED': [{ provider: 'openai-compatible', baseUrl: upstream.url, model: 'Qwen2.5-72B-Instruct' }],
        },
      },
    });
    free = await accountWithPassword(server, 'free');
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  it('lists each model with what serves it, what that is good for, and whether the tier may use it', async () => {
    const client = new DashboardClient(server.url);
    assert.equal((await client.signIn(free.email, free.password)).status, 303);
    const page = await client.get('/dashboard/models');
    assert.equal(page.status, 200);
    const rows = [...page.html.matchAll(/<tr>\n<th scope="row"><code>([^<]+)<\/code><\/th>([\s\S]*?)<\/tr>/g)];
    assert.deepEqual(
      rows.map((r) => r[1]),
      ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'],
    );
    const cells = Object.fromEntries(rows.map((r) => [r[1], r[2] ?? '']));
    assert.match(cells['PV-TURBO'] ?? '', /local: <code>stories260K<\/code>/);
    assert.match(cells['PV-TURBO'] ?? '', /model of unstated size/);
    assert.match(cells['PV-TURBO'] ?? '', /badge ok">yes/);
    const host = new URL(upstream.url).host;
    assert.match(cells['PV-ADVANCED'] ?? '', new RegExp(`<code>Qwen2.5-72B-Instruct</code> at <code>${host}</code>`));
    assert.match(cells['PV-ADVANCED'] ?? '', /large model \(72B parameters\)/);
    assert.match(cells['PV-ADVANCED'] ?? '', /badge off">no/);
    assert.match(page.html, /<code>gpt-4o-mini<\/code> → <code>PV-TURBO<\/code>/);
    assert.match(page.html, /<a href="\/dashboard\/models" aria-current="page">Models<\/a>/);
    // Signed out, the page is the sign-in's.
    assert.equal((await new DashboardClient(server.url).get('/dashboard/models')).location, '/dashboard/sign-in');
  });

  describe('in Chromium', { skip: 'missing' in chromiumFound ? chromiumFound.missing : false }, () => {
    let browser: Browser;
    before(async () => {
      browser = await chromium.launch({
        executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
        headless: true,
        args: ['--no-sandbox', '--disable-dev-shm-usage'],
      });
    });
    after(() => browser?.close());

    it('is reached from the navigation and fits 1280 and 390 px', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`${server.url}/dashboard/sign-in`);
      await page.getByLabel('Email').fill(free.email);
      await page.getByLabel('Password').fill(free.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Models' }).click();
      await page.getByRole('heading', { name: 'Models' }).waitFor();
      const advanced = page.getByRole('row', { name: /PV-ADVANCED/ });
      assert.match((await advanced.textContent()) ?? '', /Qwen2\.5-72B-Instruct/);
      await page.screenshot({ path: screenshotPath('10-models'), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      // The table scrolls inside itself: the page never gets wider than the screen.
      const width = await page.evaluate(() => {
        const host = globalThis as unknown as WidthHost;
        return { page: host.document.documentElement.scrollWidth, screen: host.innerWidth };
      });
      assert.ok(width.page <= width.screen, `the page is ${width.page} px wide on a ${width.screen} px screen`);
      await page.screenshot({ path: screenshotPath('11-models-narrow'), fullPage: true });
      await page.close();
    });
  });
});
