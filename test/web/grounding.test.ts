import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { AppError } from '../../src/errors/index.js';
import { Extractor } from '../../src/extract/index.js';
import { FetchGuard, PageFetcher, searxngProvider, WebGrounding } from '../../src/web/index.js';
import { articlePage, type LocalServer, listen } from './pages.js';

async function pdfWith(text: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage().drawText(text, { x: 40, y: 700, size: 12, font });
  return doc.save();
}

describe('web grounding step (search + fetch + extract + rank)', () => {
  let pages: LocalServer;
  let search: LocalServer;
  let hanging: LocalServer;
  let pdf: Uint8Array;
  const paths = ['/pdf', '/slow1', '/slow2', '/plain', '/html'];

  before(async () => {
    pdf = await pdfWith('Quarterly report: the glacier retreated 41 metres at the Rhone station.');
    pages = await listen((req, res) => {
      if (req.url === '/pdf') {
        res.setHeader('content-type', 'application/pdf');
        res.end(Buffer.from(pdf));
      } else if (req.url?.startsWith('/slow')) {
        const timer = setTimeout(() => res.end('late'), 30_000);
        res.on('close', () => clearTimeout(timer));
      } else if (req.url === '/plain') {
        res.setHeader('content-type', 'text/plain; charset=utf-8');
        res.end('Plain notes. The glacier at the Rhone station is monitored every month by volunteers.');
      } else {
        res.setHeader('content-type', 'text/html');
        res.end(articlePage('Alpine news', 'Tourism in the Alps grew this summer.', 30));
      }
    });
    search = await listen((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          results: paths.map((p) => ({
            url: `${pages.url}${p}`,
            title: `Result ${p}`,
            content: `Snippet ${p} glacier`,
          })),
        }),
      );
    });
    hanging = await listen(() => {});
  });
  after(async () => {
    for (const s of [pages, search, hanging]) await s.close();
  });

  const grounding = (url: string, totalMs: number, pageMs: number) =>
    new WebGrounding({
      provider: searxngProvider(url),
      fetcher: new PageFetcher(new FetchGuard({ allow: [pages.url] }), { pageMs }),
      pdf: new Extractor({ timeoutMs: 10_000, concurrency: 1 }),
      limits: { totalMs },
    });

  it('reads PDF and plain-text pages, and keeps slow pages as snippets, within the budget', async () => {
    const web = grounding(search.url, 6000, 4000);
    const started = performance.now();
    const result = await web.ground(
      'How far did the glacier retreat at the Rhone station?',
      AbortSignal.timeout(30_000),
    );
    const took = performance.now() - started;
    const first = result.passages[0];
    assert.equal(first?.citation.url, `${pages.url}/pdf`, JSON.stringify(result.passages.map((p) => p.citation)));
    assert.match(first?.citation.snippet ?? '', /retreated 41 metres/);
    assert.deepEqual(
      result.pages.map((p) => p.read),
      [true, false, false, true, true],
    );
    assert.ok(result.passages.some((p) => p.citation.snippet === 'Snippet /slow1 glacier'));
    // The budget is 6 s, the slow pages would take 30 s: generous bound, never a tight one.
    assert.ok(took < 15_000, `took ${took} ms`);
  });

  it('ends a web step whose pages all hang at its total budget', async () => {
    const web = grounding(search.url, 800, 10_000);
    const started = performance.now();
    const result = await web.ground('glacier', AbortSignal.timeout(30_000));
    const took = performance.now() - started;
    assert.ok(took < 5000, `took ${took} ms`);
    assert.ok(result.pages.filter((p) => !p.read).length >= 2);
  });

  it('a search that does not answer in the budget: 504 UPSTREAM_TIMEOUT, in time', async () => {
    const web = grounding(hanging.url, 500, 500);
    const started = performance.now();
    await assert.rejects(
      web.ground('glacier', AbortSignal.timeout(30_000)),
      (err) => err instanceof AppError && err.code === 'UPSTREAM_TIMEOUT' && /did not answer in time/.test(err.message),
    );
    assert.ok(performance.now() - started < 5000);
  });
});
