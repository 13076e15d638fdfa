import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { createAccount, serverEnv, stored, storedBalances } from '../support/reliability.js';

async function killHard(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await once(server.child, 'exit');
}

/**
 * kill -9 of a real `pvai serve` between a keyed chat's charge and its answer (the upstream holds it): the charge
 * and the claim's note of it are one atomic write, so the retry after a restart takes the abandoned claim over,
 * refunds what the dead attempt charged, runs once more and is answered; the account ends charged exactly once.
 */
for (const backend of backends())
  describe(`Idempotency-Key across kill -9 (${backend})`, () => {
    let upstream: MockUpstream;
    let database: TestDatabase;
    let server: ServerProcess | undefined;

    before(async () => {
      upstream = await startMockUpstream();
      database = await createTestDatabase(backend);
    });
    after(async () => {
      if (server) await killHard(server);
      await upstream.close();
      await database.drop();
    });

    it('leaves the key retryable and the account charged once', { timeout: 180_000 }, async () => {
      const env = serverEnv(
        database,
        upstream.url,
        { tiers: { business: { rpm: 10_000, rpd: 100_000, monthly: 1_000_000 } } },
        { PVAI_IDEMPOTENCY_LEASE_SECONDS: '1' },
      );
      server = await startServerProcess(env);
      const purchased = 1000;
      const { accountId, apiKey } = await createAccount(server.url, 'business', purchased);
      const body = JSON.stringify({
        model: 'PV-TURBO',
        user_id: 'kill-user',
        skip_cache: true,
        max_tokens: 8,
        messages: [{ role: 'user', content: 'charge me once' }],
      });
      const post = (url: string) =>
        fetch(`${url}/z1/chat/completions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'k9' },
          body,
        });

      // The first attempt's answer is held by the upstream far longer than the test runs.
      upstream.script({ kind: 'slow', chunks: ['never'], delayMs: 600_000 });
      const first = post(server.url).then(
        async (res) => new Error(`answered ${res.status}: ${await res.text()}`),
        (err: unknown) => err,
      );
      const noted = async () =>
        (
          await stored<{ refunds: string }>(database, 'SELECT refunds FROM idempotency_keys WHERE idem_key = $1', [
            'k9',
          ])
        )[0]?.refunds;
      const deadline = Date.now() + 30_000;
      while ((await noted()) === undefined || (await noted()) === '[]') {
        if (Date.now() > deadline) assert.fail(`the charge was never noted on the claim: ${await first}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const charged = JSON.parse((await noted()) as string) as { amount: number }[];
      assert.equal(charged.length, 1, 'one charge noted');
      assert.ok((charged[0]?.amount ?? 0) > 0);
      assert.equal(
        (await storedBalances(database)).get(accountId),
        purchased - (charged[0]?.amount ?? 0),
        'the charge is stored with its note',
      );
      // And the upstream holds the model call (the queued slow answer is this attempt's, not the retry's).
      while (upstream.requests.length === 0) {
        if (Date.now() > deadline) assert.fail('the upstream was never called');
        await new Promise((r) => setTimeout(r, 20));
      }
      await killHard(server);
      assert.doesNotMatch(String(await first), /answered/, 'the first attempt got no answer');

      server = await startServerProcess(env);
      const retry = await post(server.url);
      const text = await retry.text();
      assert.equal(retry.status, 200, text);
      assert.equal(retry.headers.get('idempotent-replayed'), null, 'executed, not replayed');
      const price = Number(retry.headers.get('x-credits-charged'));
      assert.equal(price, charged[0]?.amount);
      const again = await post(server.url);
      assert.equal(await again.text(), text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      await server.stop();

      assert.equal(upstream.requests.length, 2, 'the upstream was asked twice: once by the dead attempt');
      assert.equal((await storedBalances(database)).get(accountId), purchased - price, 'charged exactly once');
      const usage = await stored<{ n: number }>(
        database,
        'SELECT COUNT(*) AS n FROM usage_records WHERE account_id = $1',
        [accountId],
      );
      assert.equal(Number(usage[0]?.n), 1, 'one usage row');
    });
  });
