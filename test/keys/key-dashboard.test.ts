import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import { findChromium, screenshotPath } from '../support/browser.js';
import { accountWithPassword, DashboardClient, revocableKeyIds } from '../support/dashboard.js';
import { backends } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Box {
  x: number;
  width: number;
}

const chromiumFound = findChromium();
const skip = 'missing' in chromiumFound ? chromiumFound.missing : false;

/** The Keys page in Chromium: a key with a budget made by its form, Post/Redirect/Get, the table at 390 px. */
describe('the dashboard Keys page in Chromium', { skip }, () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let alice: Awaited<ReturnType<typeof accountWithPassword>>;

  before(async () => {
    server = await startTestServer('sqlite');
    alice = await accountWithPassword(server, 'startup', 500);
    browser = await chromium.launch({
      executablePath: 'path' in chromiumFound ? chromiumFound.path : '',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
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

  const keysOfAlice = async () =>
    (
      await server.request<{ data: Array<Record<string, unknown>> }>('GET', `/admin/accounts/${alice.accountId}/keys`, {
        admin: true,
      })
    ).body.data;

  it('creates a key with a budget, models and an expiry; a reload shows no secret and makes no second key', async () => {
    const form = page.locator('form[action="/dashboard/keys"]');
    await form.getByLabel('Key name').fill('mobile app');
    await form.getByText('Budget, limits, models, expiry').click();
    await form.getByLabel('Credit budget').fill('25');
    await form.getByLabel('Budget period').selectOption('total');
    await form.getByLabel('Requests per minute').fill('20');
    await form.getByLabel('PV-TURBO').check();
    await form.getByLabel('Expires after').fill('2099-06-30');
    await form.getByLabel('Metadata').fill('team=mobile');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key created: mobile app' }).waitFor();
    const secret = (await page.locator('#new-key-secret').textContent())?.trim() ?? '';
    assert.match(secret, /^pv_sk_/);
    await page.screenshot({ path: screenshotPath('keys-created-1280'), fullPage: true });
    const made = (await keysOfAlice()).find((k) => k.name === 'mobile app');
    assert.deepEqual(
      {
        budget: made?.budget,
        rate_limits: made?.rate_limits,
        models: made?.models,
        expires_at: made?.expires_at,
        metadata: made?.metadata,
      },
      {
        budget: { credits: 25, period: 'total' },
        rate_limits: { rpm: 20, rpd: null },
        models: ['PV-TURBO'],
        expires_at: '2099-06-30T23:59:59.999Z',
        metadata: { team: 'mobile' },
      },
    );
    const count = (await keysOfAlice()).length;
    await page.reload();
    await page.getByRole('heading', { name: 'Active keys' }).waitFor();
    assert.equal(await page.locator('#new-key-secret').count(), 0, 'the secret was shown once');
    assert.equal((await keysOfAlice()).length, count, 'the reload created no second key');
    assert.match((await page.locator('table').first().textContent()) ?? '', /0 of 25 credits in total/);
  });

  it('edits a key: clears its models, changes its budget', async () => {
    await page.getByLabel('Edit mobile app').click();
    const form = page.locator('details.edit').filter({ has: page.locator('summary[aria-label="Edit mobile app"]') });
    await form.getByLabel('Credit budget').fill('40');
    await form.getByLabel('PV-TURBO').uncheck();
    await form.getByRole('button', { name: 'Save mobile app' }).click();
    await page.getByText('Key updated.').waitFor();
    const key = (await keysOfAlice()).find((k) => k.name === 'mobile app');
    assert.deepEqual(key?.budget, { credits: 40, period: 'total' });
    assert.equal(key?.models, null);
  });

  it('keeps Status, Rotate and Revoke on screen at 390 px wide', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole('heading', { name: 'Active keys' }).waitFor();
    for (const name of ['Revoke mobile app', 'Rotate mobile app']) {
      const box = (await page.getByRole('button', { name }).boundingBox()) as Box | null;
      assert.ok(box, name);
      assert.ok(box.x >= 0 && box.x + box.width <= 390, `${name} is within the 390 px screen: ${JSON.stringify(box)}`);
    }
    const status = (await page.getByText('active').first().boundingBox()) as Box | null;
    assert.ok(status && status.x + status.width <= 390, 'the status is on screen');
    const scrollWidth = await page.evaluate(
      () =>
        (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement
          .scrollWidth,
    );
    assert.ok(scrollWidth <= 390, `the page does not scroll sideways (${scrollWidth} px)`);
    await page.screenshot({ path: screenshotPath('keys-390'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.reload();
    await page.screenshot({ path: screenshotPath('keys-1280'), fullPage: true });
  });
});

for (const backend of backends()) {
  describe(`the dashboard Keys forms over HTTP (${backend})`, () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(backend);
    });
    after(() => server.close());

    it('refuses a rate limit above the tier in the form, and edits only its own keys', async () => {
      const alice = await accountWithPassword(server, 'free', 10);
      const bob = await accountWithPassword(server, 'free', 10);
      const client = new DashboardClient(server.url);
      await client.signIn(alice.email, alice.password);
      await client.get('/dashboard/keys');
      const refused = await client.post('/dashboard/keys', { name: 'fast', rpm: '11' });
      assert.equal(refused.status, 400);
      assert.match(refused.html, /rate_limits\.rpm is at most the free tier(&#39;|')s 10/);
      await client.get('/dashboard/keys');
      const asBob = new DashboardClient(server.url);
      await asBob.signIn(bob.email, bob.password);
      const bobKey = revocableKeyIds((await asBob.get('/dashboard/keys')).html)[0] ?? '';
      assert.equal((await client.post(`/dashboard/keys/${bobKey}/edit`, { name: 'mine now' })).status, 404);
    });
  });
}
