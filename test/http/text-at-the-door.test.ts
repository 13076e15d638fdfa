import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertConformsToContract } from '../support/contract.js';
import { backends } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface ErrorBody {
  code: string;
  message: string;
  details: { field: string; reason: string };
}

/**
 * Text at the door (http/text.ts): strings that are not well-formed Unicode, NUL anywhere, and control
 * characters in identifiers are refused with 400 INVALID_TEXT naming the field, before anything is written,
 * the same on both backends; everything else is taken and given back exactly as sent. Before: a lone
 * surrogate in user_id was stored as U+FFFD (three end users merged into one), and NUL was a 500 on
 * PostgreSQL while SQLite stored it.
 */
for (const backend of backends()) {
  describe(`text at the door (${backend})`, () => {
    let server: TestServer;
    let apiKey: string;
    let accountId: string;

    before(async () => {
      server = await startTestServer(backend, { config: { tiers: { business: { rpm: 10_000 } } } });
      ({ apiKey, accountId } = await server.createAccount('business', 100));
    });
    after(() => server.close());

    const rows = async (table: string) =>
      (
        await server.running.runtime.db.query<{ n: number | string }>(
          `SELECT count(*) AS n FROM ${table} WHERE account_id = $1`,
          [accountId],
        )
      )[0]?.n;
    const refused = (res: { status: number; body: unknown; text: string }, field: string, reason: RegExp) => {
      assert.equal(res.status, 400, res.text);
      const body = res.body as ErrorBody;
      assert.equal(body.code, 'INVALID_TEXT', res.text);
      assert.equal(body.details.field, field, res.text);
      assert.match(body.details.reason, reason, res.text);
    };
    const memory = (userId: string, content: string) =>
      server.request('POST', '/z1/memory', { apiKey, body: { user_id: userId, content } });
    const list = async (userId: string) =>
      (
        await server.request<{ data: Array<{ content: string; user_id: string }> }>(
          'GET',
          `/z1/memory?user_id=${encodeURIComponent(userId)}`,
          { apiKey },
        )
      ).body.data;

    it('refuses lone surrogates in user_id instead of merging three end users into one', async () => {
      // JSON.stringify writes each lone surrogate as its \\uXXXX escape, as any client's JSON does.
      refused(await memory('iso\ud800', 'Lives in Tartu.'), 'user_id', /unpaired surrogate \(U\+D800\) at character 3/);
      refused(await memory('iso\udc00', 'Lives in Tartu.'), 'user_id', /unpaired surrogate \(U\+DC00\)/);
      const real = await memory('iso\ufffd', 'Lives in Riga.');
      assert.equal(real.status, 201, real.text);
      assert.equal(String(await rows('memories')), '1', 'nothing was written for the refused two');
      const got = await list('iso\ufffd');
      assert.deepEqual(
        got.map((m) => [m.user_id, m.content]),
        [['iso\ufffd', 'Lives in Riga.']],
      );
      // A surrogate pair is well-formed: an emoji user id is a user id like any other, kept exactly.
      const emoji = await memory('iso\ud83d\ude00', 'Has a cat.');
      assert.equal(emoji.status, 201, emoji.text);
      assert.deepEqual(
        (await list('iso😀')).map((m) => m.content),
        ['Has a cat.'],
      );
      assert.deepEqual(
        (await list('iso\ufffd')).map((m) => m.content),
        ['Lives in Riga.'],
      );
    });

    it('refuses NUL in any text and control characters in identifiers, naming the field, writing nothing', async () => {
      const before = String(await rows('memories'));
      refused(await memory('nul-user', 'a\u0000b'), 'content', /U\+0000 \(NUL\) at character 1/);
      refused(await memory('a\u0000b', 'fine'), 'user_id', /U\+0000/);
      refused(await memory('tab\tuser', 'fine'), 'user_id', /control characters/);
      refused(await memory('del\u007fuser', 'fine'), 'user_id', /control characters/);
      refused(
        await server.request('POST', '/z1/memory', {
          apiKey,
          body: { user_id: 'u', content: 'x', metadata: { tags: ['ok', 'bad\u0000'] } },
        }),
        'metadata.tags[1]',
        /U\+0000/,
      );
      refused(
        await server.request('POST', '/z1/memory', {
          apiKey,
          body: { user_id: 'u', content: 'x', metadata: { 'key\ud800': 1 } },
        }),
        'metadata.key\ud800',
        /has a key that is not well-formed Unicode/,
      );
      assert.equal(String(await rows('memories')), before, 'no memory row was written');

      const chat = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: { model: 'PV-TURBO', user_id: 'u', max_tokens: 4, messages: [{ role: 'user', content: 'hi\u0000' }] },
      });
      refused(chat, 'messages[0].content', /U\+0000/);
      refused(
        await server.request('POST', '/z1/rag/documents', { apiKey, body: { user_id: 'u', content: 'text\u0000' } }),
        'content',
        /U\+0000/,
      );
      refused(
        await server.request('POST', '/z1/code/execute', { apiKey, body: { user_id: 'u', code: 'print(1)\ud800' } }),
        'code',
        /unpaired surrogate/,
      );
      assert.equal(String(await rows('rag_documents')), '0');
    });

    it('takes every other character, and gives it back exactly as sent', async () => {
      // Controls other than NUL in free text, bidi overrides, zero-width and line separators, a noncharacter,
      // combining marks, a private-use supplementary character: text, not identifiers.
      const content = 'tab\there \u0001\u0017 \u202Eevil\u202C \u200B\u2028\uFFFE e\u0301 \udbc2\udced 😀';
      const made = await memory('rare-text', content);
      assert.equal(made.status, 201, made.text);
      assert.equal((made.body as { content: string }).content, content);
      assert.deepEqual(
        (await list('rare-text')).map((m) => m.content),
        [content],
      );
      // Identifiers may hold any character but the controls: spaces, U+FFFD, RTL text, emoji.
      const id = ' שלום \ufffd 😀 ';
      assert.equal((await memory(id, 'x')).status, 201);
      assert.deepEqual(
        (await list(id)).map((m) => m.user_id),
        [id],
        'compared exactly as sent: no trimming',
      );
      assert.deepEqual(await list('שלום \ufffd 😀'), []);
    });

    it('refuses query and path escapes that are not UTF-8 or stand for NUL, before the query parser keeps them raw', async () => {
      const get = (path: string) => server.request('GET', path, { apiKey });
      refused(await get('/z1/memory?user_id=a%00b'), 'user_id', /NUL, %00/);
      // %ED%A0%80 is a surrogate encoded as UTF-8, which UTF-8 forbids; %C3%28 is a broken sequence.
      refused(await get('/z1/memory?user_id=iso%ED%A0%80'), 'user_id', /%ED%A0%80 is not UTF-8/);
      refused(await get('/z1/memory?user_id=iso%C3%28'), 'user_id', /not UTF-8/);
      refused(await get('/z1/memory?user_id=a%01b'), 'user_id', /control characters/);
      refused(await get('/z1/rag/documents/doc%00x?user_id=u'), 'path', /NUL/);
      refused(await get('/z1/memory/mem%ED%A0%80?user_id=u'), 'path', /not UTF-8/);
      // Well-formed escapes still mean what they say: U+FFFD is a user of its own.
      const fffd = await get('/z1/memory?user_id=iso%EF%BF%BD');
      assert.equal(fffd.status, 200, fffd.text);
      assert.equal((fffd.body as { data: Array<{ id: string }> }).data.length, 1);
      // ... in the path too: a path parameter is its characters, not its escapes (mem%5F... is mem_...).
      const id = (fffd.body as { data: Array<{ id: string }> }).data[0]?.id ?? '';
      const escaped = await get(`/z1/memory/${id.replace('_', '%5F')}/history?user_id=iso%EF%BF%BD`);
      assert.equal(escaped.status, 200, escaped.text);
    });

    it('refuses multipart form fields whose bytes are not UTF-8, or that hold controls where they are identifiers', async () => {
      const upload = async (fields: Array<[string, Buffer]>) => {
        const boundary = 'pvai-text-test';
        const parts: Buffer[] = [];
        for (const [name, value] of fields) {
          parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n`), value);
          parts.push(Buffer.from('\r\n'));
        }
        parts.push(
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` +
              `Content-Type: text/plain\r\n\r\nThe locker code is 4417.\r\n--${boundary}--\r\n`,
          ),
        );
        const res = await fetch(`${server.url}/z1/rag/documents`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
          body: Buffer.concat(parts),
        });
        const body = await res.json();
        await assertConformsToContract('POST', '/z1/rag/documents', res.status, res.headers, body);
        return { status: res.status, body, text: JSON.stringify(body) };
      };
      const surrogateBytes = Buffer.from([0x69, 0x73, 0x6f, 0xed, 0xa0, 0x80]);
      refused(await upload([['user_id', surrogateBytes]]), 'user_id', /bytes are not UTF-8/);
      refused(await upload([['user_id', Buffer.from('a\u0001b')]]), 'user_id', /control characters/);
      refused(
        await upload([
          ['user_id', Buffer.from('u')],
          ['title', Buffer.from('T\u0000')],
        ]),
        'title',
        /U\+0000/,
      );
      refused(
        await upload([
          ['user_id', Buffer.from('u')],
          ['metadata', Buffer.from('{"k":"\\u0000"}')],
        ]),
        'metadata.k',
        /U\+0000/,
      );
      assert.equal(String(await rows('rag_documents')), '0');
      const ok = await upload([['user_id', Buffer.from('Zoë 😀')]]);
      assert.equal(ok.status, 201, ok.text);
      assert.equal((ok.body as { user_id: string }).user_id, 'Zoë 😀');
      // 256 characters is the limit, counted as the contract counts them: an emoji is one (two UTF-16 units).
      const longest = await upload([['user_id', Buffer.from('😀'.repeat(256))]]);
      assert.equal(longest.status, 201, longest.text);
      const over = await upload([['user_id', Buffer.from('😀'.repeat(257))]]);
      assert.equal(over.status, 400, over.text);
    });

    it('stores a file whose text layer holds NUL (a UTF-16 file) with U+FFFD in its place, spans unchanged', async () => {
      const text = 'Gate A\u0000 opens at nine.';
      const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
      const form = new FormData();
      form.set('user_id', 'utf16');
      form.set('file', new Blob([utf16], { type: 'text/plain' }), 'gate.txt');
      const res = await fetch(`${server.url}/z1/rag/documents`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}` },
        body: form,
      });
      const body = (await res.json()) as { id: string; status: string };
      assert.equal(res.status, 201, JSON.stringify(body));
      const stored = await server.running.runtime.db.query<{ text: string }>(
        'SELECT text FROM rag_documents WHERE id = $1',
        [body.id],
      );
      assert.equal(stored[0]?.text, 'Gate A\ufffd opens at nine.');
      const hits = await server.request<{ data: Array<{ snippet: string; char_start: number; char_end: number }> }>(
        'POST',
        '/z1/rag/search',
        { apiKey, body: { user_id: 'utf16', query: 'gate opens nine' } },
      );
      assert.equal(hits.status, 200, hits.text);
      assert.equal(hits.body.data[0]?.char_end, text.length);
    });
  });
}
