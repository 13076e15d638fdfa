import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertConformsToContract } from '../support/contract.js';
import { backends } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/**
 * Refusals that agree with each other and with the docs. Before: whitespace-only JSON content was 201 and
 * a stored `failed` document while the same as a file was 400 EMPTY_DOCUMENT; a PNG named or typed as text
 * was 400 DOCUMENT_UNREADABLE where the docs say 415 for another format; the search endpoints took `k` up
 * to 100 on the free tier, whose chat may retrieve 5.
 */
for (const backend of backends()) {
  describe(`document and search refusals (${backend})`, () => {
    let server: TestServer;
    let apiKey: string;
    let freeKey: string;
    let accountId: string;

    before(async () => {
      server = await startTestServer(backend, {
        config: { tiers: { business: { rpm: 10_000 }, free: { rpm: 10_000 } } },
      });
      ({ apiKey, accountId } = await server.createAccount('business', 100));
      ({ apiKey: freeKey } = await server.createAccount('free', 100));
    });
    after(() => server.close());

    const documentRows = async () =>
      Number(
        (
          await server.running.runtime.db.query<{ n: number | string }>(
            'SELECT count(*) AS n FROM rag_documents WHERE account_id = $1',
            [accountId],
          )
        )[0]?.n,
      );
    async function upload(data: Buffer, filename: string, type: string) {
      const form = new FormData();
      form.set('user_id', 'u');
      form.set('file', new Blob([data], { type }), filename);
      const res = await fetch(`${server.url}/z1/rag/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}` },
        body: form,
      });
      const body = (await res.json()) as ErrorBody;
      await assertConformsToContract('POST', '/z1/rag/documents', res.status, res.headers, body);
      return { status: res.status, body };
    }

    it('refuses a document with no text with 400 EMPTY_DOCUMENT, as JSON and as a file alike, storing nothing', async () => {
      for (const content of [' ', '\n\n\t  \r\n', '\u00a0\u2003\ufeff']) {
        const json = await server.request<ErrorBody>('POST', '/z1/rag/documents', {
          apiKey,
          body: { user_id: 'u', content },
        });
        assert.equal(json.status, 400, json.text);
        assert.equal(json.body.code, 'EMPTY_DOCUMENT');
        const file = await upload(Buffer.from(content), 'blank.txt', 'text/plain');
        assert.equal(file.status, 400, JSON.stringify(file.body));
        assert.equal(file.body.code, 'EMPTY_DOCUMENT');
      }
      assert.equal(await documentRows(), 0, 'nothing stored, not even a failed document');
    });

    it('answers 415 for a file in another format, whatever its name or declared type say', async () => {
      const png = Buffer.concat([
        Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'),
        Buffer.alloc(64),
      ]);
      const jpeg = Buffer.concat([Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'), Buffer.alloc(64)]);
      const gzip = Buffer.concat([Buffer.from('1f8b0800000000000003', 'hex'), Buffer.alloc(32)]);
      const cases: Array<[Buffer, string, string, string]> = [
        [png, 'photo.txt', 'text/plain', 'image/png'],
        [png, 'notes.md', 'application/octet-stream', 'image/png'],
        [jpeg, 'scan', 'application/octet-stream', 'image/jpeg'],
        [gzip, 'log.txt', 'text/plain', 'application/gzip'],
      ];
      for (const [data, name, type, detected] of cases) {
        const res = await upload(data, name, type);
        assert.equal(res.status, 415, `${name}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
        assert.equal(res.body.details.detected, detected);
      }
      // Text is text, even when it starts like XML; a file of NUL-laden bytes that is no known format stays 400.
      const xml = await upload(
        Buffer.from('<?xml version="1.0"?>\n<note>The pier opens at six.</note>'),
        'n.txt',
        'text/plain',
      );
      assert.equal(xml.status, 201, JSON.stringify(xml.body));
      const binary = await upload(Buffer.from([0x41, 0, 0xff, 0xfe, 0x00, 0x12]), 'binary.txt', 'text/plain');
      assert.equal(binary.status, 400);
      assert.equal(binary.body.code, 'DOCUMENT_UNREADABLE');
    });

    it("caps the searches' k by the tier, with chat's rag_k refusal", async () => {
      for (const path of ['/z1/rag/search', '/z1/memory/search']) {
        const over = await server.request<ErrorBody>('POST', path, {
          apiKey: freeKey,
          body: { user_id: 'u', query: 'anything', k: 6 },
        });
        assert.equal(over.status, 400, over.text);
        assert.equal(over.body.code, 'RAG_K_EXCEEDS_TIER');
        assert.equal(over.body.message, 'k is at most 5 on the free tier');
        assert.deepEqual(over.body.details, { field: 'k', max: 5 });
        const at = await server.request('POST', path, { apiKey: freeKey, body: { user_id: 'u', query: 'x', k: 5 } });
        assert.equal(at.status, 200, at.text);
        const business = await server.request('POST', path, { apiKey, body: { user_id: 'u', query: 'x', k: 100 } });
        assert.equal(business.status, 200, business.text);
      }
      const chat = await server.request<ErrorBody>('POST', '/z1/chat/completions', {
        apiKey: freeKey,
        body: { model: 'PV-TURBO', user_id: 'u', use_rag: true, rag_k: 6, messages: [{ role: 'user', content: 'hi' }] },
      });
      assert.equal(chat.body.code, 'RAG_K_EXCEEDS_TIER');
      assert.equal(chat.body.message, 'rag_k is at most 5 on the free tier');
    });
  });
}
