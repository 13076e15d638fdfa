import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { RawConfig } from '../../src/config/index.js';
import type { CitationBody } from '../support/documents.js';
import { type MockUpstream, startMockUpstream, systemPrompt } from '../support/mock-openai-upstream.js';
import { manualClock, startTestServer, type TestServer } from '../support/server.js';
import { articlePage, type LocalServer, listen } from './pages.js';

const WALRUS_FACT = 'The 2026 walrus census of Svalbard counted 5,503 walruses on the ice.';
const AURORA_FACT = 'The aurora index over Tromso reached level 7 on Tuesday night.';
const QUESTION = 'How many walruses did the 2026 walrus census of Svalbard count?';

interface WebCitation extends CitationBody {
  url?: string;
}

interface ChatBody {
  choices: Array<{ message: { content: string } }>;
  citations?: WebCitation[];
  memory_context: { items_retrieved: number };
}
interface ErrorBody {
  code: string;
  message: string;
}

const credits = async (server: TestServer, accountId: string) =>
  Number((await server.request('GET', `/admin/accounts/${accountId}`, { admin: true })).body.credits);

interface Hit {
  url: string;
  title: string;
  snippet: string;
}

/** The search results every provider mock answers with (in its own wire format). */
function hits(pages: LocalServer, secret: LocalServer): Hit[] {
  return [
    { url: `${pages.url}/walrus`, title: 'Walrus census 2026', snippet: 'Walrus census results for Svalbard.' },
    { url: `${pages.url}/weather`, title: 'Arctic weather', snippet: 'Weather in the Arctic this week.' },
    {
      url: `${pages.url}/slow`,
      title: 'Slow walrus blog',
      snippet: 'Slow blog: the walrus census of Svalbard is done every five years.',
    },
    {
      url: `${pages.url}/to-private`,
      title: 'Redirecting walrus page',
      snippet: 'Redirect snippet: walrus counts in Svalbard keep rising.',
    },
    { url: `http://2130706433:${secret.port}/admin`, title: 'Internal', snippet: 'Internal walrus census admin.' },
  ];
}

describe('chat with use_web_search (real HTTP: search providers, pages, upstream)', () => {
  let upstream: MockUpstream;
  let pages: LocalServer;
  let secret: LocalServer;
  let searx: LocalServer;
  let brave: LocalServer;
  let tavily: LocalServer;
  const searches: Array<{ provider: string; query: string; auth?: string | undefined }> = [];
  const clock = manualClock(Date.UTC(2026, 5, 1));
  const servers: TestServer[] = [];

  const start = async (web: RawConfig['web'], withClock = false, extra: RawConfig = {}) => {
    const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
    const server = await startTestServer('sqlite', {
      ...(withClock ? { clock } : {}),
      config: {
        tiers: { free: { rpm: 10_000 } },
        routing: { 'PV-TURBO': [target] },
        web: { fetchAllow: [pages.url], fetchAllowPorts: [secret.port], totalMs: 2000, pageMs: 700, ...web },
        ...extra,
      },
    });
    servers.push(server);
    const { apiKey, accountId } = await server.createAccount('free', 1000);
    return { server, apiKey, accountId };
  };

  const ask = (server: TestServer, apiKey: string, extra: Record<string, unknown> = {}) =>
    server.request<ChatBody & ErrorBody>('POST', '/z1/chat/completions', {
      apiKey,
      body: {
        model: 'PV-TURBO',
        user_id: 'alice',
        use_web_search: true,
        messages: [{ role: 'user', content: QUESTION }],
        ...extra,
      },
    });

  before(async () => {
    upstream = await startMockUpstream({ defaultText: 'About 5,503 walruses [1].' });
    secret = await listen((_req, res) => res.end('internal secrets'));
    pages = await listen((req, res) => {
      const path = req.url ?? '/';
      if (path === '/walrus') {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(articlePage('Walrus census 2026', WALRUS_FACT, 120));
      } else if (path === '/weather') {
        // Broken encoding: bytes that are not UTF-8 in a page that says it is; the text is still read.
        res.setHeader('content-type', 'text/html; charset=utf-8');
        const html = articlePage('Arctic weather', AURORA_FACT, 10);
        res.end(
          Buffer.concat([
            Buffer.from(html.slice(0, 400)),
            Buffer.from([0xff, 0xfe, 0xc3]),
            Buffer.from(html.slice(400)),
          ]),
        );
      } else if (path === '/slow') {
        const timer = setTimeout(() => res.end('late'), 20_000);
        res.on('close', () => clearTimeout(timer));
      } else if (path === '/to-private') {
        res.writeHead(302, { location: `http://127.0.0.1:${secret.port}/metadata` });
        res.end();
      } else {
        res.statusCode = 404;
        res.end();
      }
    });
    const results = hits(pages, secret);
    const readBody = (req: import('node:http').IncomingMessage) =>
      new Promise<string>((resolve) => {
        let text = '';
        req.on('data', (c) => {
          text += c;
        });
        req.on('end', () => resolve(text));
      });
    searx = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname.startsWith('/nojson')) {
        res.statusCode = 403;
        res.end('Forbidden');
        return;
      }
      searches.push({ provider: 'searxng', query: url.searchParams.get('q') ?? '' });
      if (url.searchParams.get('format') !== 'json') {
        res.statusCode = 400;
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          query: url.searchParams.get('q'),
          results: results.map((h, i) => ({
            url: h.url,
            title: h.title,
            content: h.snippet,
            engine: 'x',
            score: 5 - i,
          })),
        }),
      );
    });
    brave = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      searches.push({
        provider: 'brave',
        query: url.searchParams.get('q') ?? '',
        auth: req.headers['x-subscription-token'] as string,
      });
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          type: 'search',
          web: {
            type: 'search',
            results: results.map((h) => ({ url: h.url, title: h.title, description: `<strong>${h.snippet}</strong>` })),
          },
        }),
      );
    });
    tavily = await listen(async (req, res) => {
      const body = JSON.parse(await readBody(req)) as { query: string; max_results: number };
      searches.push({ provider: 'tavily', query: body.query, auth: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          query: body.query,
          results: results
            .slice(0, body.max_results)
            .map((h) => ({ url: h.url, title: h.title, content: h.snippet, score: 0.9 })),
        }),
      );
    });
  });
  after(async () => {
    for (const server of servers) await server.close();
    for (const s of [pages, secret, searx, brave, tavily]) await s?.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.reset();
    searches.length = 0;
  });

  /** What every provider's answer must show: the right page cited, failures as snippets, nothing private touched. */
  const assertGrounded = (res: Awaited<ReturnType<typeof ask>>, elapsedMs: number) => {
    assert.equal(res.status, 200, res.text);
    const citations = res.body.citations ?? [];
    const first = citations[0];
    assert.ok(first, 'a citation');
    assert.equal(first.source, 'web');
    assert.equal(first.url, `${pages.url}/walrus`);
    assert.equal(first.title, 'Walrus census 2026');
    assert.ok(first.snippet.includes('5,503 walruses'), first.snippet);
    assert.equal(typeof first.score, 'number');
    const prompt = systemPrompt(upstream);
    assert.match(prompt, /\[1\] Walrus census 2026\n[^[]*5,503 walruses/);
    // Pages that could not be read (too slow, redirected to a private address) count with their snippets.
    assert.ok(
      citations.some((c) => c.snippet.startsWith('Slow blog')),
      JSON.stringify(citations),
    );
    assert.ok(citations.some((c) => c.snippet.startsWith('Redirect snippet')));
    assert.ok(!prompt.includes('late'));
    for (const c of citations) assert.ok(c.url, 'every web citation has its url');
    assert.deepEqual(secret.seen, [], 'the private server saw no request');
    // The web step has a 2 s budget: generous bound for the whole request.
    assert.ok(elapsedMs < 8000, `took ${elapsedMs} ms`);
    assert.equal(res.body.memory_context.items_retrieved, citations.length);
  };

  it('SearXNG: cites the page that answers, degrades failed pages to snippets, never fetches private targets', async () => {
    const { server, apiKey } = await start({ searchProvider: 'searxng', searchUrl: searx.url });
    const started = performance.now();
    const res = await ask(server, apiKey, { skip_cache: true });
    assertGrounded(res, performance.now() - started);
    assert.deepEqual(searches, [{ provider: 'searxng', query: QUESTION }]);
    // The page with broken bytes was still read (its passage is ranked below, if chosen at all).
    const aurora = await ask(server, apiKey, {
      skip_cache: true,
      messages: [{ role: 'user', content: 'What level did the aurora index over Tromso reach?' }],
    });
    assert.equal(aurora.body.citations?.[0]?.url, `${pages.url}/weather`);
    assert.ok(aurora.body.citations?.[0]?.snippet.includes('level 7'));
  });

  it('with an embedder configured, ranks passages by BM25 fused with the embeddings (hybrid)', async () => {
    const { server, apiKey } = await start({ searchProvider: 'searxng', searchUrl: searx.url }, false, {
      embeddingUpstream: { baseUrl: upstream.url, model: 'embed' },
    });
    const started = performance.now();
    const res = await ask(server, apiKey, { skip_cache: true });
    assertGrounded(res, performance.now() - started);
    // The question and the lexical top passages were embedded (in the embedder's batches).
    const inputs = upstream.requests
      .filter((r) => r.path.endsWith('/embeddings'))
      .flatMap((r) => (r.body as { input: string[] }).input);
    assert.ok(inputs.includes(QUESTION), JSON.stringify(inputs.slice(0, 2)));
    assert.ok(inputs.some((t) => t.includes('5,503 walruses')));
  });

  it('Brave Search: the same grounding, key sent as X-Subscription-Token, markup stripped from snippets', async () => {
    const { server, apiKey } = await start({
      searchProvider: 'brave',
      searchUrl: `${brave.url}/res/v1/web/search`,
      searchApiKey: 'brave-key',
    });
    const started = performance.now();
    const res = await ask(server, apiKey, { skip_cache: true });
    assertGrounded(res, performance.now() - started);
    assert.equal(searches[0]?.auth, 'brave-key');
    assert.ok(res.body.citations?.every((c) => !c.snippet.includes('<strong>')));
  });

  it('Tavily: the same grounding, key sent as a Bearer token', async () => {
    const { server, apiKey } = await start({
      searchProvider: 'tavily',
      searchUrl: `${tavily.url}/search`,
      searchApiKey: 'tvly-key',
    });
    const started = performance.now();
    const res = await ask(server, apiKey, { skip_cache: true });
    assertGrounded(res, performance.now() - started);
    assert.equal(searches[0]?.auth, 'Bearer tvly-key');
  });

  it('sends the web citations in the last chunk of a stream', async () => {
    const { server, apiKey } = await start({ searchProvider: 'searxng', searchUrl: searx.url });
    const res = await fetch(`${server.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'PV-TURBO',
        user_id: 'alice',
        use_web_search: true,
        stream: true,
        skip_cache: true,
        messages: [{ role: 'user', content: QUESTION }],
      }),
    });
    assert.equal(res.status, 200);
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
      .map((e) => JSON.parse(e.slice(6)) as { choices: unknown[]; citations?: WebCitation[] });
    const last = events.at(-1);
    // Without include_usage the finish chunk is the last, and carries pvai's extras.
    assert.ok((last?.choices[0] as { finish_reason?: string } | undefined)?.finish_reason);
    assert.equal(last?.citations?.[0]?.source, 'web');
    assert.equal(last?.citations?.[0]?.url, `${pages.url}/walrus`);
    assert.ok(events.slice(0, -1).every((e) => e.citations === undefined));
  });

  it('without a provider: 400 WEB_SEARCH_UNAVAILABLE saying how to configure one, nothing charged', async () => {
    const { server, apiKey, accountId } = await start({});
    for (const extra of [{}, { skip_cache: true }, { stream: true }]) {
      const res = await ask(server, apiKey, extra);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'WEB_SEARCH_UNAVAILABLE');
      assert.match(res.body.message, /PVAI_WEB_SEARCH_PROVIDER/);
    }
    assert.equal(await credits(server, accountId), 1000);
    assert.equal(upstream.requests.length, 0);
  });

  it('a SearXNG without JSON enabled: 502 whose message names search.formats, and the credits back', async () => {
    const { server, apiKey, accountId } = await start({ searchProvider: 'searxng', searchUrl: `${searx.url}/nojson` });
    const res = await ask(server, apiKey);
    assert.equal(res.status, 502, res.text);
    assert.equal(res.body.code, 'UPSTREAM_ERROR');
    assert.match(res.body.message, /search\.formats/);
    assert.match(res.body.message, /settings\.yml/);
    assert.equal(await credits(server, accountId), 1000);
  });

  it('caches a web-grounded answer for 5 minutes only', async () => {
    const { server, apiKey } = await start({ searchProvider: 'searxng', searchUrl: searx.url }, true);
    const first = await ask(server, apiKey);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('x-cache'), 'MISS');
    clock.advance(4 * 60 * 1000);
    const second = await ask(server, apiKey);
    assert.equal(second.headers.get('x-cache'), 'HIT');
    assert.deepEqual(second.body.citations, first.body.citations);
    assert.equal(searches.length, 1);
    clock.advance(60 * 1000 + 1);
    const third = await ask(server, apiKey);
    assert.equal(third.headers.get('x-cache'), 'MISS');
    assert.equal(searches.length, 2, 'a fresh search after 5 minutes');
  });
});
