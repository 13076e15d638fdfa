import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword } from '../support/dashboard.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * The dashboard's frame and its own pages in Chromium at 1280 and 390 px: sign-in, the navigation, the SLA page
 * (its target label clear of the bars, percentiles only from enough requests), the password change (a reload
 * repeats no POST) and the low-credit banner. Screenshots of each in test-output/screenshots/.
 */
/** What the page scripts below use of the DOM (the tests compile without the DOM's types). */
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}
interface DomHost {
  document: {
    documentElement: { scrollWidth: number };
    querySelectorAll(selector: string): Iterable<{ getBoundingClientRect(): Box; closest(s: string): unknown }>;
  };
}

const chromiumFound = findChromium();
const skip = 'missing' in chromiumFound ? chromiumFound.missing : false;
const WIDTHS = [1280, 390] as const;

describe('dashboard frame, sign-in, SLA and password in Chromium at 1280 and 390 px', { skip }, () => {
  let server: TestServer;
  let upstream: MockUpstream;
  let browser: Browser;
  let owner: Awaited<ReturnType<typeof accountWithPassword>>;

  before(async () => {
    upstream = await startMockUpstream();
    const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
    server = await startTestServer('sqlite', {
      config: {
        tiers: { business: { rpm: 10_000 } },
        routing: {
          'PV-TURBO': [target],
          'PV-STANDARD': [target],
          'PV-ADVANCED': [target],
          'PV-CODEX': [target],
        },
      },
    });
    // 40 credits, of which the requests below spend 35: low, so every page carries the banner (screenshots too).
    owner = await accountWithPassword(server, 'business', 40);
    browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    const chat = (model: string) =>
      fetch(`${server.url}/z1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${owner.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(chatBody({ model, skip_cache: true })),
      });
    // PV-TURBO: 25 requests (p50 and p95 shown, p99 not); the three others 1 each (none shown). Four bars at 100%,
    // above the target line: the last one is where the label used to be drawn.
    for (let i = 0; i < 25; i++) assert.equal((await chat('PV-TURBO')).status, 200);
    for (const model of ['PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX']) assert.equal((await chat(model)).status, 200);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });

  async function pageAt(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    return context.newPage();
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/dashboard/keys');
  }

  /** The page is no wider than the viewport: nothing pushed off-screen (a table scrolls in its own box). */
  async function fits(page: Page, width: number, what: string): Promise<void> {
    const scrollWidth = await page.evaluate(
      () => (globalThis as unknown as DomHost).document.documentElement.scrollWidth,
    );
    assert.ok(scrollWidth <= width, `${what} at ${width} px is ${scrollWidth} px wide`);
  }

  for (const width of WIDTHS) {
    it(`sign-in, the navigation and the SLA page fit ${width} px, with every control on screen`, async () => {
      const page = await pageAt(width);
      await page.goto(`${server.url}/dashboard/sign-in`);
      await fits(page, width, 'sign-in');
      await page.screenshot({ path: screenshotPath(`20-sign-in-${width}`), fullPage: true });
      await signIn(page);
      await page.goto(`${server.url}/dashboard/sla?window=1h`);
      await page.getByRole('img', { name: /Availability per model/ }).waitFor();
      await fits(page, width, 'SLA');
      for (const name of ['Sign out', 'Password', 'API keys', 'Usage', 'SLA', 'Documents']) {
        const control = page.getByRole(name === 'Sign out' ? 'button' : 'link', { name, exact: true }).first();
        const box = await control.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${name} on screen at ${width} px`);
      }
      await page.screenshot({ path: screenshotPath(`21-sla-${width}`), fullPage: true });
      await page.context().close();
    });
  }

  it('a reload after a refused sign-in (401) or a refused form (403) asks for the page again, posting nothing', async () => {
    const page = await pageAt(1280);
    const methods: string[] = [];
    page.on('request', (request) => {
      if (request.resourceType() === 'document') methods.push(request.method());
    });
    await page.goto(`${server.url}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not-the-password');
    const [refused] = await Promise.all([
      page.waitForResponse((res) => res.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    assert.equal(refused.status(), 401);
    await page.getByRole('alert').waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.deepEqual(methods, ['GET', 'POST', 'GET']);
    await signIn(page);
    await page.goto(`${server.url}/dashboard/password`);
    await page
      .locator('form[action="/dashboard/password"] input[name="_csrf"]')
      .first()
      .evaluate((input) => input.setAttribute('value', 'forged'));
    await page.getByLabel('Current password').fill(owner.password);
    await page.getByLabel('New password', { exact: true }).fill('never-applied');
    await page.getByLabel('New password again').fill('never-applied');
    methods.length = 0;
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('heading', { name: 'Refused' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Password' }).waitFor();
    assert.deepEqual(methods, ['POST', 'GET']);
    await page.context().close();
  });

  it("places each target's label clear of every bar", async () => {
    const page = await pageAt(1280);
    await signIn(page);
    await page.goto(`${server.url}/dashboard/sla?window=1h`);
    const overlaps = await page.evaluate(() => {
      const doc = (globalThis as unknown as DomHost).document;
      const found: string[] = [];
      let labels = 0;
      for (const label of doc.querySelectorAll('svg .target-label')) {
        labels++;
        const l = label.getBoundingClientRect();
        for (const bar of doc.querySelectorAll('svg rect')) {
          const b = bar.getBoundingClientRect();
          const apart = l.right <= b.left || b.right <= l.left || l.bottom <= b.top || b.bottom <= l.top;
          if (!apart && label.closest('svg') === bar.closest('svg')) found.push(JSON.stringify({ l, b }));
        }
      }
      return { labels, found };
    });
    assert.ok(overlaps.labels >= 1, 'the availability chart draws its target (p95: only when on scale)');
    assert.deepEqual(overlaps.found, []);
    await page.context().close();
  });

  it('shows a percentile only from enough requests, as an estimate, and says why where it does not', async () => {
    const page = await pageAt(1280);
    await signIn(page);
    await page.goto(`${server.url}/dashboard/sla?window=1h`);
    const cells = async (model: string) =>
      page
        .getByRole('row', { name: new RegExp(model) })
        .last()
        .getByRole('cell')
        .allTextContents();
    // Requests, errors, availability, p50, p95, p99, target.
    const turbo = await cells('PV-TURBO');
    assert.match(turbo[3] ?? '', /^≈ [\d,]+ ms$/, 'p50 from 25 requests');
    assert.match(turbo[4] ?? '', /^≈ [\d,]+ ms$/, 'p95 from 25 requests');
    assert.equal(turbo[5], '—', 'no p99 from 25 requests');
    assert.deepEqual((await cells('PV-STANDARD')).slice(3, 6), ['—', '—', '—'], 'one request: no percentile');
    await page.getByTitle('p99 is shown from 100 requests in the window; this one has 25').waitFor();
    // The p95 chart has PV-TURBO's bar only.
    const p95 = page.getByRole('img', { name: /Latency p95 per model \(bucket estimate\)/ });
    assert.equal(await p95.locator('rect').count(), 1);
    await page.context().close();
  });

  for (const width of WIDTHS) {
    it(`changes the password at ${width} px; a reload of the answer repeats no POST; the low-credit banner shows`, async () => {
      const page = await pageAt(width);
      await signIn(page);
      await page.getByRole('alert').getByText('Your account is low on credits:').waitFor();
      await page.getByRole('link', { name: 'Password', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Password' }).waitFor();
      await fits(page, width, 'password');
      const fresh = `new-password-${width}`;
      await page.getByLabel('Current password').fill(owner.password);
      await page.getByLabel('New password', { exact: true }).fill(fresh);
      await page.getByLabel('New password again').fill(fresh);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Password changed.').waitFor();
      owner.password = fresh;
      await page.screenshot({ path: screenshotPath(`22-password-${width}`), fullPage: true });
      const methods: string[] = [];
      page.on('request', (request) => {
        if (request.url().startsWith(`${server.url}/dashboard/password`)) methods.push(request.method());
      });
      await page.reload();
      await page.getByText('Password changed.').waitFor();
      assert.deepEqual(methods, ['GET']);
      await page.context().close();
    });
  }
});
