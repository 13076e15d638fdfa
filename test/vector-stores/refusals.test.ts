import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { APIError, toFile } from 'openai';
import { assertConformsToContract } from '../support/contract.js';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { openaiClient } from '../support/openai-client.js';
import { type Response, startTestServer, type TestServer } from '../support/server.js';

/**
 * What the Files and Vector Stores APIs refuse, each with the contract's error body (`status`, `message`, a
 * specific `code`, `details.field` where a field is at fault, and OpenAI's `error` beside it), and with nothing
 * stored: purposes pvai has no use for, formats it cannot read, empty files, files over the tier's per-file
 * size (streamed, never whole in memory), query rewriting, static chunking with too much overlap, bad filters.
 */
const MIB = 1024 * 1024;
const PNG = Buffer.concat([
  Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'),
  Buffer.alloc(64),
]);

interface ErrorBody {
  status: string;
  code: string;
  message: string;
  details: Record<string, unknown> | null;
  error: { message: string; type: string; code: string; param: string | null };
}
const TYPES: Record<number, string> = { 400: 'invalid_request_error', 403: 'permission_error' };

/** The contract's error body, with `code` and (when given) `details.field` matching `field`. */
function assertRefusal(
  res: { status: number; body: unknown; text?: string },
  status: number,
  code: string,
  field?: RegExp,
) {
  const body = res.body as ErrorBody;
  const seen = `${res.status} ${res.text ?? JSON.stringify(res.body)}`;
  assert.equal(res.status, status, seen);
  assert.equal(body.status, 'error', seen);
  assert.equal(body.code, code, seen);
  assert.ok(body.message.length > 0, seen);
  assert.equal(body.error.code, code.toLowerCase(), seen);
  assert.equal(body.error.message, body.message);
  assert.equal(body.error.type, TYPES[status] ?? 'invalid_request_error', seen);
  if (field) {
    assert.match(String(body.details?.field), field, seen);
    assert.equal(body.error.param, body.details?.field, 'param is details.field');
  }
}

for (const backend of backends()) {
  describe(`files and vector stores refusals (${backend})`, () => {
    let server: TestServer;
    let apiKey: string;
    let freeKey: string;
    let store: string;
    let fileId: string;

    before(async () => {
      server = await startTestServer(backend, {
        config: { tiers: { business: { rpm: 10_000 }, free: { rpm: 10_000 } }, embeddingModel: EMBEDDING_MODEL },
      });
      ({ apiKey } = await server.createAccount('business', 1000));
      ({ apiKey: freeKey } = await server.createAccount('free', 1000));
      const client = openaiClient(server.url, apiKey);
      fileId = (
        await client.files.create({
          file: await toFile(Buffer.from('The pier opens at six.\n'), 'pier.txt'),
          purpose: 'assistants',
        })
      ).id;
      store = (await client.vectorStores.create({ name: 'refusals' })).id;
      const attached = await client.vectorStores.files.createAndPoll(
        store,
        { file_id: fileId },
        { pollIntervalMs: 50 },
      );
      assert.equal(attached.status, 'completed');
    });
    after(() => server?.close());

    /** POST /z1/files as multipart (the form's fields in the order given), checked against the contract. */
    async function upload(fields: Array<[string, string | Blob, string?]>, key = apiKey): Promise<Response<ErrorBody>> {
      const form = new FormData();
      for (const [name, value, filename] of fields) {
        if (typeof value === 'string') form.append(name, value);
        else form.append(name, value, filename);
      }
      const res = await fetch(`${server.url}/z1/files`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}` },
        body: form,
      });
      const text = await res.text();
      const body = JSON.parse(text) as ErrorBody;
      await assertConformsToContract('POST', '/z1/files', res.status, res.headers, body);
      return { status: res.status, headers: res.headers, body, text };
    }
    const fileCount = async (key: string) => {
      const res = await server.request<{ data: unknown[] }>('GET', '/z1/files', { apiKey: key });
      return res.body.data.length;
    };
    const post = (path: string, body: unknown, key = apiKey) =>
      server.request<ErrorBody>('POST', path, { apiKey: key, body });
    const text = (s: string) => new Blob([s], { type: 'text/plain' });

    it('a purpose pvai has no use for (or none) is 400 INVALID_PARAMETER naming purpose', async () => {
      const before = await fileCount(apiKey);
      for (const purpose of ['batch', 'fine-tune', 'vision', 'evals', 'nonsense']) {
        const res = await upload([
          ['purpose', purpose],
          ['file', text('hello'), 'a.txt'],
        ]);
        assertRefusal(res, 400, 'INVALID_PARAMETER', /^purpose$/);
      }
      assertRefusal(await upload([['file', text('hello'), 'a.txt']]), 400, 'INVALID_PARAMETER', /^purpose$/);
      const viaSdk = await openaiClient(server.url, apiKey)
        .files.create({ file: await toFile(Buffer.from('hello'), 'a.txt'), purpose: 'batch' })
        .catch((e: unknown) => e);
      assert.ok(viaSdk instanceof APIError && viaSdk.status === 400, String(viaSdk));
      assert.equal((viaSdk.error as { param?: string }).param, 'purpose');
      assert.equal(await fileCount(apiKey), before, 'nothing stored');
    });

    it('a user_id is at most 256 characters counted as the contract counts them (code points)', async () => {
      const form = (userId: string) =>
        upload([
          ['purpose', 'assistants'],
          ['file', text('hello'), 'a.txt'],
          ['user_id', userId],
        ]);
      // 256 characters outside the BMP are 512 UTF-16 units, and still 256 characters.
      const astral = await form('𝔘'.repeat(256));
      assert.equal(astral.status, 200, JSON.stringify(astral.body));
      assertRefusal(await form('𝔘'.repeat(257)), 400, 'INVALID_PARAMETER', /^user_id$/);
    });

    it('PNG bytes named .txt are 415 UNSUPPORTED_MEDIA_TYPE; an empty file is 400 EMPTY_DOCUMENT', async () => {
      const before = await fileCount(apiKey);
      for (const [name, type] of [
        ['photo.txt', 'text/plain'],
        ['notes.md', 'text/markdown'],
        ['photo.png', 'image/png'],
      ] as const) {
        const res = await upload([
          ['purpose', 'assistants'],
          ['file', new Blob([PNG], { type }), name],
        ]);
        assertRefusal(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      for (const purpose of ['assistants', 'user_data']) {
        const res = await upload([
          ['purpose', purpose],
          ['file', text(''), 'empty.txt'],
        ]);
        assertRefusal(res, 400, 'EMPTY_DOCUMENT');
      }
      assert.equal(await fileCount(apiKey), before, 'nothing stored');
    });

    it('a file over the free tier’s 16 MiB is 413 PAYLOAD_TOO_LARGE, streamed or declared; 16 MiB is taken', async () => {
      const boundary = 'pvai-test-boundary-7d1f';
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n` +
          'Content-Type: text/plain\r\n\r\n',
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const line = Buffer.from(`${'All work and no play makes a dull file. '.repeat(25).slice(0, 1023)}\n`);
      let sent = 0;
      const total = 17 * MIB;
      // A stream with no Content-Length: the server can only find out as the bytes arrive.
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(head);
        },
        pull(controller) {
          if (sent >= total) {
            controller.enqueue(tail);
            controller.close();
            return;
          }
          const chunk = Buffer.concat(Array.from({ length: 64 }, () => line));
          sent += chunk.length;
          controller.enqueue(chunk);
        },
      });
      const res = await fetch(`${server.url}/z1/files`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${freeKey}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit & { duplex: 'half' });
      const refused = { status: res.status, body: (await res.json()) as ErrorBody };
      await assertConformsToContract('POST', '/z1/files', res.status, res.headers, refused.body);
      assertRefusal(refused, 413, 'PAYLOAD_TOO_LARGE');

      const free = openaiClient(server.url, freeKey);
      const declared = await free.files
        .create({ file: await toFile(Buffer.alloc(17 * MIB, 'a'), 'big.txt'), purpose: 'assistants' })
        .catch((e: unknown) => e);
      assert.ok(declared instanceof APIError && declared.status === 413, String(declared));
      assert.equal((declared.error as { code?: string }).code, 'payload_too_large');
      assert.equal(await fileCount(freeKey), 0, 'nothing stored');

      const atCap = await free.files.create({
        file: await toFile(Buffer.alloc(16 * MIB, 'b'), 'cap.txt'),
        purpose: 'assistants',
      });
      assert.equal(atCap.bytes, 16 * MIB, 'exactly the cap is allowed');
      await free.files.delete(atCap.id);
    });

    it('rewrite_query true is 400 INVALID_PARAMETER naming it; false is searched', async () => {
      const res = await post(`/z1/vector_stores/${store}/search`, { query: 'pier', rewrite_query: true });
      assertRefusal(res, 400, 'INVALID_PARAMETER', /^rewrite_query$/);
      const ok = await post(`/z1/vector_stores/${store}/search`, { query: 'pier', rewrite_query: false });
      assert.equal(ok.status, 200, ok.text);
    });

    it('static chunking with an overlap over half the chunk size is 400 on every route that takes it', async () => {
      const strategy = (overlap: number) => ({
        type: 'static',
        static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: overlap },
      });
      const field = /chunk_overlap_tokens$/;
      const other = await server.request<{ id: string }>('POST', '/z1/vector_stores', { apiKey, body: {} });
      const vs = `/z1/vector_stores/${other.body.id}`;
      assertRefusal(
        await post(`${vs}/files`, { file_id: fileId, chunking_strategy: strategy(101) }),
        400,
        'INVALID_PARAMETER',
        field,
      );
      assertRefusal(
        await post(`${vs}/file_batches`, { file_ids: [fileId], chunking_strategy: strategy(101) }),
        400,
        'INVALID_PARAMETER',
        field,
      );
      assertRefusal(
        await post(`${vs}/file_batches`, { files: [{ file_id: fileId, chunking_strategy: strategy(150) }] }),
        400,
        'INVALID_PARAMETER',
        field,
      );
      const stores = (await server.request<{ data: unknown[] }>('GET', '/z1/vector_stores', { apiKey })).body.data;
      assertRefusal(
        await post('/z1/vector_stores', { file_ids: [fileId], chunking_strategy: strategy(101) }),
        400,
        'INVALID_PARAMETER',
        field,
      );
      const after = (await server.request<{ data: unknown[] }>('GET', '/z1/vector_stores', { apiKey })).body.data;
      assert.equal(after.length, stores.length, 'no store was created');
      const listed = await server.request<{ data: unknown[] }>('GET', `${vs}/files`, { apiKey });
      assert.deepEqual(listed.body.data, [], 'nothing was attached');
      const half = await post(`${vs}/files`, { file_id: fileId, chunking_strategy: strategy(100) });
      assert.equal(half.status, 200, `exactly half is allowed: ${half.text}`);
    });

    it('a bad filter is 400 INVALID_PARAMETER naming the field at fault', async () => {
      const bad: Array<[unknown, RegExp]> = [
        [{ type: 'like', key: 'team', value: 'red' }, /^filters(\.type)?$/],
        [{ type: 'eq', key: 'team' }, /^filters(\.value)?$/],
        [{ type: 'eq', value: 'red' }, /^filters(\.key)?$/],
        [{ type: 'in', key: 'team', value: 'red' }, /^filters(\.value)?$/],
        [{ type: 'gt', key: 'year', value: { n: 1 } }, /^filters(\.value)?$/],
        [{ type: 'and', filters: 'team' }, /^filters(\.filters)?$/],
        [
          {
            type: 'or',
            filters: [
              { type: 'eq', key: 'team', value: 'red' },
              { type: 'eq', key: 'team' },
            ],
          },
          /^filters(\.filters(\[1\]|\.1)(\.value)?)?$/,
        ],
      ];
      for (const [filters, field] of bad) {
        const res = await post(`/z1/vector_stores/${store}/search`, { query: 'pier', filters });
        assertRefusal(res, 400, 'INVALID_PARAMETER', field);
      }
      const good = await post(`/z1/vector_stores/${store}/search`, {
        query: 'pier',
        filters: { type: 'eq', key: 'team', value: 'red' },
      });
      assert.equal(good.status, 200, good.text);
    });
  });
}
