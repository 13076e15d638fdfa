import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type DownloadProgress, downloadModel } from '../../src/providers/local/index.js';
import { TEST_MODEL } from '../support/server.js';

const MODEL_PATH = TEST_MODEL;
let server: Server;
let base: string;
let dir: string;
let content: Buffer;
let sha256: string;

/** Ranges asked of /ranged.gguf; the next answer is cut off after `cutAfter` bytes when it is set. */
const ranges: Array<string | undefined> = [];
let cutAfter: number | undefined;

function serveRanged(req: IncomingMessage, res: ServerResponse): void {
  ranges.push(req.headers.range);
  const start = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
  const body = content.subarray(start);
  const headers = { 'content-type': 'application/octet-stream', 'content-length': String(body.length) };
  if (start > 0)
    res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${content.length - 1}/${content.length}` });
  else res.writeHead(200, headers);
  if (cutAfter === undefined) return void res.end(body);
  // Enough bytes to reach the file, then the connection breaks.
  res.write(body.subarray(0, cutAfter), () => setTimeout(() => res.destroy(), 50));
  cutAfter = undefined;
}

before(async () => {
  content = await readFile(MODEL_PATH);
  sha256 = createHash('sha256').update(content).digest('hex');
  dir = await mkdtemp(join(tmpdir(), 'pvai-download-'));
  server = createServer((req, res) => {
    if (req.url === '/redirect') return void res.writeHead(302, { location: '/model.gguf' }).end();
    if (req.url === '/ranged.gguf') return serveRanged(req, res);
    if (req.url !== '/model.gguf') return void res.writeHead(404).end('missing');
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': content.length });
    // in several writes, so progress is reported more than once
    const step = 256 * 1024;
    for (let offset = 0; offset < content.length; offset += step) res.write(content.subarray(offset, offset + step));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('downloadModel', () => {
  it('downloads through a redirect, verifies the checksum, reports progress, leaves no temp file', async () => {
    const progress: DownloadProgress[] = [];
    const dest = join(dir, 'nested', 'stories.gguf');
    const result = await downloadModel(`${base}/redirect`, dest, { sha256, onProgress: (p) => progress.push(p) });
    assert.deepEqual(result, { path: dest, bytes: content.length, sha256 });
    assert.ok((await readFile(dest)).equals(content));
    assert.ok(progress.length > 2);
    assert.deepEqual(progress.at(-1), { receivedBytes: content.length, totalBytes: content.length });
    assert.deepEqual(await readdir(join(dir, 'nested')), ['stories.gguf']);
  });

  it('a checksum mismatch throws and leaves nothing behind (an existing file is untouched)', async () => {
    const dest = join(dir, 'checked.gguf');
    await assert.rejects(downloadModel(`${base}/model.gguf`, dest, { sha256: '0'.repeat(64) }), /checksum mismatch/);
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.includes('checked')),
      [],
    );
    await writeFile(dest, 'previous version');
    await assert.rejects(downloadModel(`${base}/model.gguf`, dest, { sha256: '0'.repeat(64) }), /checksum mismatch/);
    assert.equal(await readFile(dest, 'utf8'), 'previous version');
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.includes('checked')),
      ['checked.gguf'],
    );
  });

  it('with resume, keeps what arrived when the connection breaks and continues from there next time', async () => {
    const dest = join(dir, 'resumed', 'stories.gguf');
    ranges.length = 0;
    cutAfter = 400_000;
    await assert.rejects(downloadModel(`${base}/ranged.gguf`, dest, { sha256, resume: true }));
    const kept = (await stat(`${dest}.part`)).size;
    assert.ok(kept > 0 && kept <= 400_000, `kept ${kept} bytes`);
    const progress: DownloadProgress[] = [];
    const result = await downloadModel(`${base}/ranged.gguf`, dest, {
      sha256,
      resume: true,
      onProgress: (p) => progress.push(p),
    });
    assert.deepEqual(ranges, [undefined, `bytes=${kept}-`]);
    assert.deepEqual(result, { path: dest, bytes: content.length, sha256 });
    assert.ok((await readFile(dest)).equals(content));
    assert.deepEqual(progress[0], { receivedBytes: kept, totalBytes: content.length });
    assert.deepEqual(await readdir(join(dir, 'resumed')), ['stories.gguf']);
  });

  it('with resume, starts over when the server ignores the range, and drops a part that fails the checksum', async () => {
    const dest = join(dir, 'restarted.gguf');
    await writeFile(`${dest}.part`, 'not the start of this file');
    assert.deepEqual(await downloadModel(`${base}/model.gguf`, dest, { sha256, resume: true }), {
      path: dest,
      bytes: content.length,
      sha256,
    });
    const bad = join(dir, 'bad.gguf');
    await writeFile(`${bad}.part`, content.subarray(0, 1000));
    ranges.length = 0;
    await assert.rejects(
      downloadModel(`${base}/ranged.gguf`, bad, { sha256: '0'.repeat(64), resume: true }),
      /checksum/,
    );
    assert.deepEqual(ranges, ['bytes=1000-']);
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.startsWith('bad') || name.startsWith('restarted')),
      ['restarted.gguf'],
    );
  });

  it('an HTTP error throws', async () => {
    await assert.rejects(downloadModel(`${base}/nope`, join(dir, 'x.gguf')), /HTTP 404/);
  });
});
