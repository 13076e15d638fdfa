import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { articlePage, type LocalServer, listen } from '../web/pages.js';
import {
  type Annotation,
  chatRequests,
  type OutputItem,
  type ResponsesHarness,
  startResponses,
  streamResponse,
  systemText,
} from './support.js';

const WALRUS_FACT = 'The 2026 walrus census of Svalbard counted 5,503 walruses on the ice.';
const QUESTION = 'How many walruses did the 2026 walrus census of Svalbard count?';
const ANSWER = 'About 5,503 walruses [1].';

/**
 * `web_search` is pvai's web grounding: a SearXNG stand-in answers the search, a page server on loopback
 * (allowed by `web.fetchAllow`) serves the pages, and a second server stands for a private address that a
 * search result points at: the SSRF guard must never fetch it. The answer's `[1]` is a url_citation.
 */
describe('web_search through the web grounding (real HTTP: SearXNG stand-in, pages, upstream)', () => {
  let pages: LocalServer;
  let secret: LocalServer;
  let searx: LocalServer;
  let h: ResponsesHarness;
  const queries: string[] = [];

  before(async () => {
    secret = await listen((_req, res) => res.end('internal secrets: the admin password is hunter2'));
    pages = await listen((req, res) => {
      const path = req.url ?? '/';
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (path === '/walrus') res.end(articlePage('Walrus census 2026', WALRUS_FACT, 40));
      else if (path === '/weather') res.end(articlePage('Arctic weather', 'Snow is expected on Tuesday.', 8));
      else if (path === '/extra') res.end(articlePage('Arctic tourism', 'Cruise ships visit in July.', 8));
      else {
        res.statusCode = 404;
        res.end();
      }
    });
    // Search results in rank order: the page that answers, a private address (decimal 127.0.0.1 and the plain
    // one, neither allowed), then two more pages.
    const hits = [
      { url: `${pages.url}/walrus`, title: 'Walrus census 2026', content: 'Walrus census results for Svalbard.' },
      { url: `http://2130706433:${secret.port}/admin`, title: 'Internal', content: 'Internal walrus census admin.' },
      { url: `${pages.url}/weather`, title: 'Arctic weather', content: 'Weather in the Arctic this week.' },
      { url: `${pages.url}/extra`, title: 'Arctic tourism', content: 'Tourism in the Arctic.' },
      { url: `http://127.0.0.1:${secret.port}/metadata`, title: 'Metadata', content: 'Walrus metadata service.' },
    ];
    searx = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      queries.push(url.searchParams.get('q') ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ query: url.searchParams.get('q'), results: hits.map((hit) => ({ ...hit, score: 1 })) }));
    });
    h = await startResponses('sqlite', {
      defaultText: ANSWER,
      config: {
        web: {
          searchProvider: 'searxng',
          searchUrl: searx.url,
          fetchAllow: [pages.url],
          fetchAllowPorts: [secret.port],
          totalMs: 3000,
          pageMs: 1500,
        },
      },
    });
  });
  after(async () => {
    await h?.close();
    for (const s of [pages, secret, searx]) await s?.close();
  });
  beforeEach(() => {
    h.upstream.reset();
    queries.length = 0;
    pages.seen.length = 0;
    secret.seen.length = 0;
  });

  const ask = (tool: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
    h.create({
      model: 'PV-TURBO',
      user_id: 'alice',
      skip_cache: true,
      input: QUESTION,
      tools: [{ type: 'web_search', ...tool }],
      include: ['web_search_call.action.sources'],
      ...extra,
    });
  const fetchedPaths = () => pages.seen.map((s) => s.path).sort();

  it('a web_search_call item, then the answer whose [1] is a url_citation over exactly that span', async () => {
    const res = await ask();
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(queries, [QUESTION]);
    assert.deepEqual(
      res.body.output.map((o) => o.type),
      ['web_search_call', 'message'],
    );
    const [search, message] = res.body.output as [OutputItem, OutputItem];
    assert.equal(search.status, 'completed');
    assert.equal(search.action?.type, 'search');
    assert.equal(search.action?.query, QUESTION);
    assert.ok(search.action?.sources?.some((s) => s.type === 'url' && s.url === `${pages.url}/walrus`));
    // The page read is the model's source [1].
    assert.match(systemText(chatRequests(h.upstream)[0]), /\[1\] Walrus census 2026\n[^[]*5,503 walruses/);
    const text = message.content?.[0]?.text ?? '';
    assert.equal(text, ANSWER);
    const annotations = message.content?.[0]?.annotations ?? [];
    assert.equal(annotations.length, 1);
    const [citation] = annotations as [Annotation];
    assert.equal(citation.type, 'url_citation');
    assert.equal(citation.url, `${pages.url}/walrus`);
    assert.equal(citation.title, 'Walrus census 2026');
    assert.equal(citation.start_index, text.indexOf('[1]'));
    assert.equal(citation.end_index, text.indexOf('[1]') + 3);
    assert.equal(text.slice(citation.start_index, citation.end_index), '[1]');
  });

  it('the SSRF guard applies: a result at a private address is never requested, read or cited', async () => {
    const res = await ask({ search_context_size: 'high' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(secret.seen, [], 'the private server saw no request');
    assert.deepEqual(fetchedPaths(), ['/extra', '/walrus', '/weather']);
    assert.doesNotMatch(systemText(chatRequests(h.upstream)[0]), /hunter2|internal secrets/);
    const annotations = res.body.output.find((o) => o.type === 'message')?.content?.[0]?.annotations ?? [];
    assert.ok(annotations.length > 0);
    for (const a of annotations) assert.doesNotMatch(a.url ?? '', new RegExp(`:${secret.port}/`));
  });

  it('search_context_size is the number of results read: low 2, medium 3', async () => {
    assert.equal((await ask({ search_context_size: 'low' })).status, 200);
    // Of the first two results, the private one is not fetched.
    assert.deepEqual(fetchedPaths(), ['/walrus']);
    pages.seen.length = 0;
    assert.equal((await ask()).status, 200);
    assert.deepEqual(fetchedPaths(), ['/walrus', '/weather']);
    assert.deepEqual(secret.seen, []);
  });

  it('streamed: the search item with its steps, the answer, and the url_citation as an annotation event', async () => {
    const res = await streamResponse(h.server, h.apiKey, {
      model: 'PV-TURBO',
      user_id: 'alice',
      skip_cache: true,
      input: QUESTION,
      tools: [{ type: 'web_search_preview' }],
    });
    assert.equal(res.status, 200, res.text);
    const types = res.events.map((e) => e.data.type);
    assert.deepEqual(types.slice(0, 7), [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
      'response.output_item.done',
    ]);
    assert.equal(types.at(-1), 'response.completed');
    assert.deepEqual(
      res.events.map((e) => e.data.sequence_number),
      types.map((_, i) => i),
    );
    const added = res.events.find((e) => e.data.type === 'response.output_text.annotation.added');
    const annotation = added?.data.annotation as Annotation | undefined;
    assert.equal(annotation?.type, 'url_citation');
    assert.equal(annotation?.url, `${pages.url}/walrus`);
    const done = res.events.find((e) => e.data.type === 'response.output_text.done')?.data.text as string;
    assert.equal(done.slice(annotation?.start_index, annotation?.end_index), '[1]');
    assert.deepEqual(secret.seen, []);
  });

  it('without a search provider: 400 WEB_SEARCH_UNAVAILABLE, nothing asked upstream', async () => {
    const bare = await startResponses('sqlite', { defaultText: ANSWER });
    try {
      const res = await bare.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        input: QUESTION,
        tools: [{ type: 'web_search' }],
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'WEB_SEARCH_UNAVAILABLE');
      assert.equal(chatRequests(bare.upstream).length, 0);
    } finally {
      await bare.close();
    }
  });
});
