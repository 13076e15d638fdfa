import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { backends } from '../support/databases.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';
import { startReplica, startTestServer, type TestServer } from '../support/server.js';

/**
 * A retried streamed upload (`POST /z1/files`) and code run (`POST /z1/code/execute`) under an Idempotency-Key:
 * one stored file and one execution, the same answer replayed; on embedded SQLite and on two replicas sharing
 * PostgreSQL (the retry to the other replica). An upload's fingerprint is its fields and bytes (not the multipart
 * boundary, which differs per request): the same length with other bytes is 422.
 */
for (const backend of backends()) {
  describe(`Idempotency-Key on uploads and code runs (${backend})`, () => {
    let server: TestServer;
    let replica: RunningServer | undefined;
    let urls: string[];

    before(async () => {
      const config = { tiers: { business: { rpm: 10_000, rpd: 100_000, monthly: 1_000_000 } } };
      server = await startTestServer(backend, { config });
      if (backend === 'postgres') replica = await startReplica(server, config);
      urls = replica ? [server.url, replica.url] : [server.url];
    });
    after(async () => {
      await replica?.close();
      await server.close();
    });

    async function upload(url: string, apiKey: string, key: string, text: string) {
      const form = new FormData();
      form.append('file', new Blob([text]), 'notes.txt');
      form.append('purpose', 'assistants');
      const res = await fetch(`${url}/z1/files`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Idempotency-Key': key },
        body: form,
      });
      return { status: res.status, headers: res.headers, text: await res.text() };
    }

    it('stores a retried upload once and replays its answer; other bytes of the same length are 422', async () => {
      const { apiKey } = await server.createAccount('business', 100);
      const first = await upload(urls[0] as string, apiKey, 'upload-1', 'the first file');
      assert.equal(first.status, 200, first.text);
      const again = await upload(urls.at(-1) as string, apiKey, 'upload-1', 'the first file');
      assert.equal(again.status, 200, again.text);
      assert.equal(again.text, first.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      const files = await server.request<{ data: unknown[] }>('GET', '/z1/files', { apiKey });
      assert.equal(files.body.data.length, 1, 'one file stored');
      const other = await upload(urls.at(-1) as string, apiKey, 'upload-1', 'the other file');
      assert.equal(other.status, 422, other.text);
      assert.equal((JSON.parse(other.text) as { code: string }).code, 'IDEMPOTENCY_KEY_REUSED');
    });

    it('answers a refused upload again with its refusal, never 422 (one read in part, one empty)', async () => {
      const { apiKey } = await server.createAccount('business', 100);
      // A PNG's signature: refused once its first bytes are sniffed, before the rest is read.
      const png = Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(70_000, 1)]);
      const cases = [
        { name: 'image.png', bytes: png, key: 'png-1' },
        { name: 'empty.txt', bytes: Buffer.alloc(0), key: 'empty-1' },
      ];
      for (const { name, bytes, key } of cases) {
        const send = async (url: string) => {
          const form = new FormData();
          form.append('file', new Blob([bytes]), name);
          form.append('user_id', 'user-123');
          const res = await fetch(`${url}/z1/rag/documents`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${apiKey}`, 'Idempotency-Key': key },
            body: form,
          });
          return { status: res.status, body: (await res.json()) as { code?: string } };
        };
        const first = await send(urls[0] as string);
        assert.ok(first.status === 400 || first.status === 415, JSON.stringify(first.body));
        const again = await send(urls.at(-1) as string);
        assert.equal(again.status, first.status, `${name}: ${JSON.stringify(again.body)}`);
        assert.equal(again.body.code, first.body.code);
      }
    });

    it('runs a retried code run once', { skip: sandboxHostSkip() }, async () => {
      const { accountId, apiKey } = await server.createAccount('business', 100);
      const run = async (url: string) => {
        const res = await fetch(`${url}/z1/code/execute`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${apiKey}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': 'run-1',
          },
          body: JSON.stringify({ user_id: 'u1', code: 'import random\nprint(random.random())' }),
        });
        return { status: res.status, headers: res.headers, text: await res.text() };
      };
      const first = await run(urls[0] as string);
      assert.equal(first.status, 200, first.text);
      const again = await run(urls.at(-1) as string);
      assert.equal(again.text, first.text, 'the same random number: not run again');
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      await replica?.runtime.usage.flush();
      const rows = await server.usageRows<{ n: number }>(
        "SELECT COUNT(*) AS n FROM usage_records WHERE account_id = $1 AND endpoint = 'executeCode'",
        [accountId],
      );
      assert.equal(Number(rows[0]?.n), 1, 'one execution recorded');
    });
  });
}
