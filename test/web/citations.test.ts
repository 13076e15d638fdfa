import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ResponseStreamParams } from 'openai/lib/responses/ResponseStream';
import type { ResponseCreateParamsNonStreaming, ResponseOutputText } from 'openai/resources/responses/responses';
import { chatRequests, type ResponsesHarness, startResponses, systemText } from '../responses/support.js';
import { articlePage, type LocalServer, listen } from './pages.js';

const QUESTION = 'What did the 2026 surveys of Svalbard report about walruses, sea ice and cruise tourism?';
const WALRUS_FACT = 'The 2026 walrus census of Svalbard counted 5,503 walruses on the ice.';
const ICE_FACT = 'In 2026 the sea ice of the Svalbard fjords covered 12 percent less water than the 2010 average.';
const TOURISM_FACT = 'Svalbard cruise tourism in 2026 brought 41,000 visitors, most of them in July.';

/** What the model writes: two claims from two pages, a courtesy no page supports, and no `[n]` anywhere. */
const WALRUS_SENTENCE = 'The 2026 census counted 5,503 walruses on the Svalbard ice.';
const ICE_SENTENCE = 'The sea ice of the fjords covered 12 percent less water than the 2010 average.';
const UNMARKED = `${WALRUS_SENTENCE} ${ICE_SENTENCE}\nI hope this helps!`;

type Annotation = Extract<ResponseOutputText['annotations'][number], { type: 'url_citation' }>;

/**
 * A `web_search` answer in which the model writes no `[n]` still names its sources: a url_citation over each
 * sentence a page of the search supports, and every other page that grounded it at the end of the text.
 * Real HTTP throughout: a SearXNG stand-in, a page server on loopback, the mock upstream, the official SDK.
 */
describe('web_search citations without markers (real HTTP: SearXNG stand-in, pages, upstream, openai SDK)', () => {
  let pages: LocalServer;
  let searx: LocalServer;
  let h: ResponsesHarness;
  let resultUrls: string[];

  before(async () => {
    pages = await listen((req, res) => {
      const page: [string, string] | undefined = (
        {
          '/walrus': ['Walrus census 2026', WALRUS_FACT],
          '/ice': ['Fjord ice report', ICE_FACT],
          '/tourism': ['Cruise season review', TOURISM_FACT],
        } as Record<string, [string, string]>
      )[req.url ?? ''];
      if (!page) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(articlePage(page[0], page[1], 4));
    });
    resultUrls = ['/walrus', '/ice', '/tourism'].map((path) => `${pages.url}${path}`);
    searx = await listen((req, res) => {
      const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q');
      const results = resultUrls.map((url) => ({ url, title: '', content: 'Svalbard in 2026.', score: 1 }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ query: q, results }));
    });
    h = await startResponses('sqlite', {
      defaultText: UNMARKED,
      config: {
        web: { searchProvider: 'searxng', searchUrl: searx.url, fetchAllow: [pages.url], totalMs: 3000, pageMs: 1500 },
      },
    });
  });
  after(async () => {
    await h?.close();
    for (const s of [pages, searx]) await s?.close();
  });
  beforeEach(() => h.upstream.reset());

  // pvai's `skip_cache` (web answers are cached 5 minutes: each test scripts its own answer to the same question).
  const params = {
    model: 'PV-TURBO',
    input: QUESTION,
    safety_identifier: 'alice',
    tools: [{ type: 'web_search', search_context_size: 'high' }],
    include: ['web_search_call.action.sources'],
    skip_cache: true,
  } as ResponseCreateParamsNonStreaming & ResponseStreamParams;

  /** The answer's text, its url_citations, and the pages the search grounded it in. */
  async function answer() {
    const response = await h.client.responses.create(params);
    assert.equal(response.status, 'completed');
    const search = response.output.find((o) => o.type === 'web_search_call');
    const action = search?.action as { sources?: Array<{ url: string }> } | undefined;
    const grounded = (action?.sources ?? []).map((s) => s.url);
    const message = response.output.find((o) => o.type === 'message');
    const part = message?.content[0];
    assert.equal(part?.type, 'output_text');
    const text = part.text;
    for (const a of part.annotations) assert.equal(a.type, 'url_citation', JSON.stringify(a));
    const annotations = part.annotations as Annotation[];
    for (const a of annotations) {
      assert.ok(resultUrls.includes(a.url), `${a.url} is a page of the search results`);
      assert.ok(a.start_index >= 0 && a.start_index <= a.end_index && a.end_index <= text.length, JSON.stringify(a));
    }
    return { text, annotations, grounded };
  }

  it('each sentence a page supports is a url_citation of that page over exactly that sentence', async () => {
    const { text, annotations, grounded } = await answer();
    assert.equal(text, UNMARKED);
    assert.deepEqual([...grounded].sort(), [...resultUrls].sort(), 'every page read grounded the answer');
    const over = (sentence: string) => annotations.filter((a) => text.slice(a.start_index, a.end_index) === sentence);
    assert.deepEqual(
      over(WALRUS_SENTENCE).map((a) => [a.url, a.title]),
      [[`${pages.url}/walrus`, 'Walrus census 2026']],
    );
    assert.deepEqual(
      over(ICE_SENTENCE).map((a) => a.url),
      [`${pages.url}/ice`],
    );
    // No page supports the courtesy: nothing is cited over it.
    const courtesy = text.indexOf('I hope');
    assert.ok(annotations.every((a) => a.end_index <= courtesy || a.start_index >= text.length));
  });

  it('a page that grounded the answer but supports none of its sentences is cited at the end of the text', async () => {
    const { text, annotations } = await answer();
    const atEnd = annotations.filter((a) => a.start_index === text.length);
    assert.deepEqual(
      atEnd.map((a) => [a.url, a.end_index, a.title]),
      [[`${pages.url}/tourism`, text.length, 'Cruise season review']],
    );
    // One citation per page and sentence: the page of two passages is not cited twice.
    const keys = annotations.map((a) => `${a.url} ${a.start_index}`);
    assert.equal(new Set(keys).size, keys.length, JSON.stringify(annotations));
  });

  it('an answer no page supports still cites every page that grounded it, once each, at its end', async () => {
    h.upstream.script({ kind: 'answer', text: 'I could not find a definite answer to that.' });
    const { text, annotations, grounded } = await answer();
    assert.ok(grounded.length >= 2, JSON.stringify(grounded));
    assert.deepEqual(
      annotations.map((a) => [a.url, a.start_index, a.end_index]),
      grounded.map((url) => [url, text.length, text.length]),
    );
  });

  it('streamed: the url_citations arrive as annotation events over the sentences of the finished text', async () => {
    const stream = h.client.responses.stream(params);
    const added: Annotation[] = [];
    let done = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.annotation.added') added.push(event.annotation as Annotation);
      if (event.type === 'response.output_text.done') done = event.text;
    }
    assert.equal(done, UNMARKED);
    const spans = added.map((a) => [a.url, done.slice(a.start_index, a.end_index)]);
    assert.deepEqual(spans.slice(0, 2), [
      [`${pages.url}/walrus`, WALRUS_SENTENCE],
      [`${pages.url}/ice`, ICE_SENTENCE],
    ]);
    const final = await stream.finalResponse();
    const part = final.output.find((o) => o.type === 'message')?.content[0];
    assert.deepEqual(part?.type === 'output_text' && part.annotations, added);
  });

  it('an answer that writes [n] is cited at its markers only, as before', async () => {
    h.upstream.script({ kind: 'answer', text: `${WALRUS_SENTENCE} [1]` });
    const { text, annotations } = await answer();
    assert.equal(annotations.length, 1, JSON.stringify(annotations));
    const [marker] = annotations as [Annotation];
    assert.equal(text.slice(marker.start_index, marker.end_index), '[1]');
    // Source [1] is the best passage of the ranking, whichever page it is: its url follows its title.
    const first = /\[1\] [^\n]*\n(\S+)/.exec(systemText(chatRequests(h.upstream)[0]))?.[1];
    assert.ok(first && resultUrls.includes(first), first);
    assert.equal(marker.url, first);
  });
});
