/**
 * `npm run bench:web`: the time the web step adds to a chat request (search + fetch + extract + rank),
 * in process, against local servers on loopback: a SearXNG-format search server and a page server with
 * realistic pages (a few hundred KB of HTML each: navigation, inline scripts and styles, markup-heavy
 * article text). 5 pages per question, as the default configuration reads. Lexical ranking (no embedder).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FetchGuard, PageFetcher, searxngProvider, WebGrounding } from '../src/web/index.js';
import { table } from './lib.js';

const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 60);
const WARMUP = 5;
const PAGES = 5;
const TOPICS = ['walrus', 'glacier', 'volcano', 'harbour', 'orchard', 'railway', 'comet', 'lighthouse'];

/** A page of roughly `kb` KB: header, menu, inline script and style, an article of marked-up paragraphs, a footer. */
function realisticPage(topic: string, n: number, kb: number): string {
  const menu = Array.from(
    { length: 120 },
    (_, i) => `<li class="menu-item"><a href="/section/${i}">Section ${i}</a></li>`,
  ).join('');
  const script = `<script>window.__STATE__=${JSON.stringify({ items: Array.from({ length: 600 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ['a', 'b', 'c'] })) })};</script>`;
  const style = `<style>${Array.from({ length: 300 }, (_, i) => `.c${i}{margin:${i}px;padding:${i % 7}px;color:#${(i * 4099).toString(16).slice(0, 6).padEnd(6, '0')}}`).join('')}</style>`;
  const paras: string[] = [];
  let size = menu.length + script.length + style.length;
  for (let i = 0; size < kb * 1024; i++) {
    const p =
      `<div class="para-wrap"><p class="body-text">In part ${i} of the ${topic} report number ${n}, <a href="/ref/${i}">researchers</a> ` +
      `describe how the <em>${topic}</em> observations of ${2000 + (i % 26)} compare with earlier <span class="hl">surveys</span>, ` +
      `noting seasonal variation, measurement error and the funding of field stations across the region.</p></div>`;
    paras.push(p);
    size += p.length;
    if (i === 40)
      paras.push(`<p>The key finding about the ${topic} in report ${n}: the index rose to ${n * 7 + 3} points.</p>`);
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>${topic} report ${n}</title>${style}${script}</head><body>
<header><nav><ul>${menu}</ul></nav></header><main><article><h1>${topic} report ${n}</h1>${paras.join('\n')}</article></main>
<aside>Related: ${TOPICS.join(', ')}</aside><footer>© Example Press</footer></body></html>`;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

async function main(): Promise<void> {
  const pages = new Map<string, string>();
  for (const topic of TOPICS) {
    for (let n = 0; n < PAGES; n++) pages.set(`/${topic}/${n}`, realisticPage(topic, n, 150 + ((n * 67) % 250)));
  }
  const pageServer = createServer((req, res) => {
    const page = pages.get(req.url ?? '');
    if (!page) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
  });
  const pagesUrl = await listen(pageServer);
  const searchServer = createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    const topic = TOPICS.find((t) => q.includes(t)) ?? TOPICS[0];
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        results: Array.from({ length: PAGES }, (_, n) => ({
          url: `${pagesUrl}/${topic}/${n}`,
          title: `${topic} report ${n}`,
          content: `Snippet of the ${topic} report ${n}.`,
        })),
      }),
    );
  });
  const searchUrl = await listen(searchServer);
  const web = new WebGrounding({
    provider: searxngProvider(searchUrl),
    fetcher: new PageFetcher(new FetchGuard({ allow: [pagesUrl] })),
  });

  const bytes = [...pages.values()].map((p) => Buffer.byteLength(p));
  const rows: Record<'total' | 'search' | 'fetch' | 'extract' | 'rank', number[]> = {
    total: [],
    search: [],
    fetch: [],
    extract: [],
    rank: [],
  };
  let readAll = 0;
  for (let i = 0; i < WARMUP + QUESTIONS; i++) {
    const topic = TOPICS[i % TOPICS.length] as string;
    const result = await web.ground(`What did the ${topic} report find about the index?`, new AbortController().signal);
    if (i < WARMUP) continue;
    if (result.pages.every((p) => p.read)) readAll++;
    rows.total.push(result.timings.totalMs);
    rows.search.push(result.timings.searchMs);
    rows.fetch.push(result.timings.fetchMs);
    rows.extract.push(result.timings.extractMs);
    rows.rank.push(result.timings.rankMs);
  }
  pageServer.close();
  searchServer.close();

  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(
    `\n${QUESTIONS} questions (+${WARMUP} warm-up), ${PAGES} pages each, pages ${Math.round(Math.min(...bytes) / 1024)}–${Math.round(Math.max(...bytes) / 1024)} KB of HTML; ` +
      `every page read: ${readAll}/${QUESTIONS}\n`,
  );
  console.log(
    table(
      ['step', 'p50', 'p95', 'max'],
      (Object.keys(rows) as Array<keyof typeof rows>).map((step) => {
        const sorted = [...rows[step]].sort((a, b) => a - b);
        return [step, fmt(percentile(sorted, 50)), fmt(percentile(sorted, 95)), fmt(sorted.at(-1) ?? 0)];
      }),
    ),
  );
  const p95 = percentile(
    [...rows.total].sort((a, b) => a - b),
    95,
  );
  console.log(`\ntarget: p95 of the web step ≤ 300 ms on loopback: ${p95 <= 300 ? 'met' : 'NOT met'} (${fmt(p95)})`);
}

await main();
