import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { setUpSkip } from '../support/models.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { type EmbeddingListBody, type ErrorBody, Reference } from './support.js';

interface UsageRow {
  endpoint: string;
  model: string | null;
  status: number | string;
  prompt_tokens: number | string;
  credits: number | string;
}

/** "cat" is one token of MiniLM's vocabulary: a text of n tokens. */
const tokensOf = (n: number) => 'cat '.repeat(n).trim();

/**
 * Embeddings cost 1 credit per started 10,000 input tokens (at least 1), taken before the work, never below zero,
 * given back when the work fails; the usage row carries the tokens and the credits (docs/decisions.md, Credits).
 */
for (const backend of backends()) {
  describe(`embeddings: credits and usage (${backend})`, { skip: setUpSkip([EMBEDDING_MODEL]) }, () => {
    let server: TestServer;
    const reference = new Reference();

    before(async () => {
      server = await startTestServer(backend, {
        config: { embeddingModel: EMBEDDING_MODEL, tiers: { startup: { rpm: 10_000, rpd: 10_000 } } },
      });
    });
    after(async () => {
      await server?.close();
      await reference.close();
    });

    const embed = (apiKey: string, input: unknown, extra: Record<string, unknown> = {}) =>
      server.request<EmbeddingListBody & ErrorBody>('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-EMBED', input, ...extra },
      });
    const balance = async (apiKey: string) =>
      (await server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey })).body.credits.balance;
    const rows = (accountId: string) =>
      server.usageRows<UsageRow>(
        `SELECT endpoint, model, status, prompt_tokens, credits FROM usage_records
          WHERE account_id = $1 AND endpoint = 'createEmbedding' ORDER BY created_at, request_id`,
        [accountId],
      );

    it('charges 1 credit for a short batch, says so, counts its tokens and writes them to the usage row', async () => {
      const { apiKey, accountId } = await server.createAccount('startup', 100);
      const texts = ['The cat sits on the mat.', 'A feline rests on a rug.', 'Quarterly revenue grew 12 percent.'];
      const res = await embed(apiKey, texts);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-credits-charged'), '1');
      let tokens = 0;
      for (const text of texts) tokens += await reference.tokens(text);
      assert.equal(res.body.usage.prompt_tokens, tokens);
      assert.equal(res.body.usage.total_tokens, tokens);
      assert.equal(await balance(apiKey), 99);
      const [row] = await rows(accountId);
      assert.deepEqual(
        {
          ...row,
          status: Number(row?.status),
          prompt_tokens: Number(row?.prompt_tokens),
          credits: Number(row?.credits),
        },
        { endpoint: 'createEmbedding', model: 'PV-EMBED', status: 200, prompt_tokens: tokens, credits: 1 },
      );
    });

    it('charges one credit per started 10,000 tokens', async () => {
      const { apiKey } = await server.createAccount('startup', 100);
      const exactly = Array.from({ length: 20 }, () => tokensOf(500)); // 10,000 tokens
      const one = await embed(apiKey, exactly);
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.usage.prompt_tokens, 10_000);
      assert.equal(one.headers.get('x-credits-charged'), '1');
      const two = await embed(apiKey, [...exactly, 'cat']); // 10,001 tokens
      assert.equal(two.body.usage.prompt_tokens, 10_001);
      assert.equal(two.headers.get('x-credits-charged'), '2');
      assert.equal(await balance(apiKey), 97);
    });

    it('refuses with 402 what the balance cannot pay, charging nothing, and never goes below zero', async () => {
      const { apiKey, accountId } = await server.createAccount('startup', 1);
      const dear = await embed(apiKey, [...Array.from({ length: 20 }, () => tokensOf(500)), 'cat']);
      assert.equal(dear.status, 402, dear.text);
      assert.equal(dear.body.code, 'INSUFFICIENT_CREDITS');
      assert.deepEqual(dear.body.details, { required: 2, balance: 1 });
      assert.equal(dear.body.error.type, 'insufficient_quota');
      assert.equal(await balance(apiKey), 1);
      const refused = await embed(apiKey, 'cat', { dimensions: 100 });
      assert.equal(refused.status, 400);
      assert.equal(await balance(apiKey), 1, 'a refused request costs nothing');
      const paid = await embed(apiKey, 'cat');
      assert.equal(paid.status, 200, paid.text);
      assert.equal(await balance(apiKey), 0);
      const broke = await embed(apiKey, 'cat');
      assert.equal(broke.status, 402);
      assert.deepEqual(broke.body.details, { required: 1, balance: 0 });
      assert.equal(await balance(apiKey), 0);
      assert.deepEqual(
        (await rows(accountId)).map((r) => [Number(r.status), Number(r.credits)]),
        [
          [402, 0],
          [400, 0],
          [200, 1],
          [402, 0],
        ],
      );
    });

    it('gives the credits back when the work stops because its client left', async () => {
      const { apiKey, accountId } = await server.createAccount('startup', 100);
      // 300 texts of 500 tokens: 15 credits and seconds of embedding, so the client leaves in the middle.
      const texts = Array.from({ length: 300 }, () => tokensOf(500));
      const controller = new AbortController();
      const sent = fetch(`${server.url}/z1/embeddings`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'PV-EMBED', input: texts }),
        signal: controller.signal,
      });
      const charged = await eventually(
        () => balance(apiKey),
        (b) => b === 85,
        10_000,
      );
      assert.equal(charged, 85, 'charged before the work');
      controller.abort();
      await assert.rejects(sent);
      assert.equal(
        await eventually(
          () => balance(apiKey),
          (b) => b === 100,
          10_000,
        ),
        100,
      );
      const [row] = await eventually(
        () => rows(accountId),
        (r) => r.length === 1,
        5_000,
      );
      assert.equal(Number(row?.status), 499);
      assert.equal(Number(row?.credits), 0);
    });
  });
}
