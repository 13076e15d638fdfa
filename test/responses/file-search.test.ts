import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type DocumentBody, EMBEDDING_MODEL, filler } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import {
  type Annotation,
  chatRequests,
  type OutputItem,
  type ResponsesHarness,
  startResponses,
  streamResponse,
  systemText,
} from './support.js';

const FACT = 'The secret launch code of project Zephyr is 7431-walrus.';
const QUESTION = 'What is the launch code of project Zephyr?';

interface Result {
  file_id: string;
  filename: string;
  score: number;
  text: string;
  char_start: number;
  char_end: number;
  page?: number | null;
}

/**
 * `file_search` is retrieval over the end user's own documents (hybrid, on the service's database or on a
 * real Qdrant): the results and citations name the document, its span and page; another end user finds
 * nothing of it; `filters`, `ranking_options.score_threshold` and `max_num_results` shape the results.
 */
for (const rag of ragBackends()) {
  describe(`file_search over the end user's documents (${rag.label})`, () => {
    let retrieval: Retrieval;
    let h: ResponsesHarness;
    const docs: Record<'zephyr' | 'schedule' | 'bobs', DocumentBody & { content: string }> = {} as never;

    const upload = async (userId: string, title: string, content: string, metadata: Record<string, string>) => {
      const res = await h.server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey: h.apiKey,
        body: { user_id: userId, title, content, metadata },
      });
      assert.equal(res.status, 201, res.text);
      const ready = await eventually(
        async () =>
          (
            await h.server.request<DocumentBody>('GET', `/z1/rag/documents/${res.body.id}?user_id=${userId}`, {
              apiKey: h.apiKey,
            })
          ).body,
        (d) => d.status === 'ready',
        60_000,
      );
      assert.equal(ready.status, 'ready');
      return { ...ready, content };
    };

    before(async () => {
      retrieval = await startRetrieval(rag);
      h = await startResponses(rag.backend, {
        defaultText: 'The code is 7431-walrus [1].',
        tier: 'free',
        credits: 1000,
        config: { ...retrieval.config, embeddingModel: EMBEDDING_MODEL },
      });
      docs.zephyr = await upload('alice', 'Zephyr notes', `${filler(8)}\n\n${FACT}\n\n${filler(8, 50)}`, {
        team: 'red',
      });
      docs.schedule = await upload(
        'alice',
        'Zephyr schedule',
        `Project Zephyr launches in the spring: the launch window opens in April.\n\n${filler(6, 20)}`,
        { team: 'blue' },
      );
      docs.bobs = await upload(
        'bob',
        'Garden party',
        `Project Zephyr is the name of Bob's garden party; its launch is a toast.\n\n${filler(6, 30)}`,
        { team: 'red' },
      );
    });
    after(async () => {
      await h?.close();
      await retrieval?.stop();
    });
    beforeEach(() => h.upstream.reset());

    const ask = (userId: string, tool: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) =>
      h.create({
        model: 'PV-TURBO',
        user_id: userId,
        skip_cache: true,
        input: QUESTION,
        tools: [{ type: 'file_search', ...tool }],
        include: ['file_search_call.results'],
        ...extra,
      });
    const searchOf = (output: OutputItem[]) => {
      const item = output.find((o) => o.type === 'file_search_call');
      assert.ok(item, `no file_search_call in ${JSON.stringify(output)}`);
      return item as OutputItem & { results: Result[] | null };
    };
    const annotationsOf = (output: OutputItem[]): Annotation[] =>
      output.find((o) => o.type === 'message')?.content?.[0]?.annotations ?? [];

    it('finds the planted fact for its end user: results and a file_citation name the document, its span and page', async () => {
      const res = await ask('alice');
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.output.map((o) => o.type),
        ['file_search_call', 'message'],
      );
      const search = searchOf(res.body.output);
      assert.equal(search.status, 'completed');
      assert.deepEqual(search.queries, [QUESTION]);
      const results = search.results ?? [];
      const first = results[0];
      assert.ok(first, 'a result');
      assert.equal(first.file_id, docs.zephyr.id);
      assert.equal(first.filename, 'Zephyr notes');
      assert.ok(first.text.includes('7431-walrus'), first.text);
      assert.equal(docs.zephyr.content.slice(first.char_start, first.char_end), first.text);
      for (const r of results) {
        assert.ok([docs.zephyr.id, docs.schedule.id].includes(r.file_id), `a result of another user: ${r.file_id}`);
        assert.ok(r.score >= 0 && r.score <= 1, `score ${r.score}`);
      }
      // The model was given the fact as source [1]; its "[1]" is the citation of that document.
      assert.match(systemText(chatRequests(h.upstream)[0]), /\[1\] Zephyr notes\n[^[]*7431-walrus/);
      const text = res.body.output[1]?.content?.[0]?.text ?? '';
      assert.equal(text, 'The code is 7431-walrus [1].');
      const [citation, ...others] = annotationsOf(res.body.output);
      assert.equal(others.length, 0);
      assert.ok(citation);
      assert.equal(citation.type, 'file_citation');
      assert.equal(citation.file_id, docs.zephyr.id);
      assert.equal(citation.filename, 'Zephyr notes');
      assert.equal(citation.index, text.indexOf('[1]'));
      assert.ok('page' in citation, 'the page is named (null: a text document has none)');
      assert.equal(citation.page, null);
      assert.ok(docs.zephyr.content.slice(citation.char_start, citation.char_end).includes(FACT));
    });

    it('without include the search is reported without its results, and the answer still cites the document', async () => {
      const res = await ask('alice', {}, { include: [] });
      assert.equal(res.status, 200, res.text);
      assert.equal(searchOf(res.body.output).results, null);
      assert.equal(annotationsOf(res.body.output)[0]?.file_id, docs.zephyr.id);
    });

    it("another end user's search finds their own documents and nothing of alice's", async () => {
      const res = await ask('bob');
      assert.equal(res.status, 200, res.text);
      const results = searchOf(res.body.output).results ?? [];
      assert.ok(results.length > 0, 'bob searched his own document');
      for (const r of results) assert.equal(r.file_id, docs.bobs.id);
      for (const a of annotationsOf(res.body.output)) assert.equal(a.file_id, docs.bobs.id);
      assert.doesNotMatch(systemText(chatRequests(h.upstream)[0]), /walrus/);
      assert.doesNotMatch(res.text, new RegExp(`${docs.zephyr.id}|${docs.schedule.id}|walrus census`));
    });

    it('filters on document metadata: eq excludes the documents it does not match', async () => {
      const blue = await ask('alice', { filters: { type: 'eq', key: 'team', value: 'blue' } });
      assert.equal(blue.status, 200, blue.text);
      const blueResults = searchOf(blue.body.output).results ?? [];
      assert.ok(blueResults.length > 0);
      for (const r of blueResults) assert.equal(r.file_id, docs.schedule.id);
      assert.doesNotMatch(systemText(chatRequests(h.upstream)[0]), /walrus/);

      const red = await ask('alice', { filters: { type: 'eq', key: 'team', value: 'red' } });
      const redResults = searchOf(red.body.output).results ?? [];
      assert.equal(redResults[0]?.file_id, docs.zephyr.id);
      for (const r of redResults) assert.equal(r.file_id, docs.zephyr.id);

      const refused = await ask('alice', { filters: { type: 'eq', value: 'red' } });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.details?.field, 'tools[0].filters.key');
    });

    it('ranking_options.score_threshold: 1 keeps only the results at the top of both rankings', async () => {
      const all = searchOf((await ask('alice')).body.output).results ?? [];
      assert.ok(all.length >= 2, `${all.length} results`);
      assert.ok(
        all.some((r) => r.score < 1),
        JSON.stringify(all.map((r) => r.score)),
      );
      const strict = await ask('alice', { ranking_options: { ranker: 'auto', score_threshold: 1 } });
      assert.equal(strict.status, 200, strict.text);
      const kept = searchOf(strict.body.output).results ?? [];
      assert.ok(kept.length < all.length, `${kept.length} of ${all.length} kept`);
      for (const r of kept) assert.equal(r.score, 1);
    });

    it("max_num_results: at most that many; above the tier's rag_k it is 400 RAG_K_EXCEEDS_TIER, nothing charged", async () => {
      const two = await ask('alice', { max_num_results: 2 });
      assert.equal(two.status, 200, two.text);
      const results = searchOf(two.body.output).results ?? [];
      assert.ok(results.length > 0 && results.length <= 2, `${results.length} results`);

      const balance = async () =>
        Number((await h.server.request('GET', `/admin/accounts/${h.accountId}`, { admin: true })).body.credits);
      const before = await balance();
      h.upstream.reset();
      for (const stream of [false, true]) {
        const res = await ask('alice', { max_num_results: 6 }, { stream });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'RAG_K_EXCEEDS_TIER');
      }
      assert.equal(chatRequests(h.upstream).length, 0);
      assert.equal(await balance(), before);
    });

    it('streamed: the search is an item with its steps, then the answer and its annotation as events', async () => {
      const res = await streamResponse(h.server, h.apiKey, {
        model: 'PV-TURBO',
        user_id: 'alice',
        skip_cache: true,
        input: QUESTION,
        tools: [{ type: 'file_search' }],
        include: ['file_search_call.results'],
      });
      assert.equal(res.status, 200, res.text);
      for (const [i, e] of res.events.entries()) {
        assert.equal(e.event, e.data.type, 'the event line names the type');
        assert.equal(e.data.sequence_number, i);
      }
      const types = res.events.map((e) => e.data.type).filter((t) => t !== 'response.output_text.delta');
      assert.deepEqual(types, [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.file_search_call.in_progress',
        'response.file_search_call.searching',
        'response.file_search_call.completed',
        'response.output_item.done',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.done',
        'response.output_text.annotation.added',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const annotation = res.events.find((e) => e.data.type === 'response.output_text.annotation.added')?.data
        .annotation as Annotation;
      assert.equal(annotation.file_id, docs.zephyr.id);
      const done = res.events.find((e) => e.data.type === 'response.output_item.done')?.data.item as OutputItem;
      assert.equal((done.results ?? [])[0]?.file_id, docs.zephyr.id);
    });
  });
}
