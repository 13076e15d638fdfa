import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NotFoundError, toFile } from 'openai';
import type { FileObject } from 'openai/resources/files';
import type { ComparisonFilter, CompoundFilter } from 'openai/resources/shared';
import type { VectorStore } from 'openai/resources/vector-stores/vector-stores';
import {
  chatRequests,
  type OutputItem,
  type ResponsesHarness,
  startResponses,
  systemText,
} from '../responses/support.js';
import { type CitationBody, EMBEDDING_MODEL, filler } from '../support/documents.js';
import { type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';

/**
 * The official `openai` SDK (the pinned devDependency), unmodified but for its base URL, on /z1/files and
 * /z1/vector_stores over real HTTP, every JSON answer checked against the contract: uploads come back
 * byte-identical, attached files are searched by pvai's retrieval engine with exact spans, attributes filter,
 * deletions leave nothing searchable, and file_search (Responses) and chat's vector_store_ids cite the file.
 */
const FACT = 'The secret launch code of project Zephyr is 7431-walrus.';
const QUESTION = 'What is the launch code of project Zephyr?';
const FILE_ID = /^file-[0-9a-f]{24}$/;
const VS_ID = /^vs_[0-9a-f]{24}$/;
const BATCH_ID = /^vsfb_[0-9a-f]{24}$/;
const POLL = { pollIntervalMs: 50 };
/** Non-ASCII on purpose: the bytes must come back as they went in, not re-encoded. */
const TXT = `Zephyr field notes — café log ☕\n\n${filler(8)}\n\n${FACT}\n\n${filler(8, 50)}\n`;
const MD = `# Zephyr schedule\n\nProject Zephyr launches in the spring: the launch window opens in April.\n\n${filler(6, 20)}\n`;

interface SearchResult {
  file_id: string;
  filename: string;
  score: number;
  attributes: Record<string, unknown> | null;
  content: Array<{ type: string; text: string }>;
  chunk_id: string;
  page: number | null;
  char_start: number;
  char_end: number;
}
type Filter = ComparisonFilter | CompoundFilter;

for (const rag of ragBackends()) {
  describe(`the openai SDK's files and vector stores APIs (${rag.label})`, () => {
    let retrieval: Retrieval;
    let h: ResponsesHarness;
    let txt: FileObject;
    let md: FileObject;
    let store: VectorStore;

    before(async () => {
      retrieval = await startRetrieval(rag);
      h = await startResponses(rag.backend, {
        defaultText: 'The code is 7431-walrus [1] [2].',
        config: { ...retrieval.config, embeddingModel: EMBEDDING_MODEL },
      });
    });
    after(async () => {
      await h?.close();
      await retrieval?.stop();
    });

    /** The store's results for `query`, as on the wire (pvai's span fields included). */
    const search = async (vectorStoreId: string, query: string, filters?: Filter) => {
      const res = await h.server.request<{ search_query: string | string[]; data: SearchResult[]; object: string }>(
        'POST',
        `/z1/vector_stores/${vectorStoreId}/search`,
        { apiKey: h.apiKey, body: { query, ...(filters ? { filters } : {}) } },
      );
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    const fileIdsOf = async (query: string, filters?: Filter) =>
      new Set((await search(store.id, query, filters)).data.map((r) => r.file_id));

    it('files.create, list, retrieve and content: ids, fields, and the bytes byte-identical', async () => {
      txt = await h.client.files.create({
        file: await toFile(Buffer.from(TXT), 'zephyr-notes.txt'),
        purpose: 'assistants',
      });
      md = await h.client.files.create({ file: await toFile(Buffer.from(MD), 'schedule.md'), purpose: 'user_data' });
      assert.match(txt.id, FILE_ID);
      assert.match(md.id, FILE_ID);
      assert.equal(txt.object, 'file');
      assert.equal(txt.bytes, Buffer.byteLength(TXT), 'bytes, not characters');
      assert.equal(txt.filename, 'zephyr-notes.txt');
      assert.equal(txt.purpose, 'assistants');
      assert.equal(md.purpose, 'user_data');
      assert.equal(txt.status, 'processed');
      assert.equal(txt.expires_at, null);
      assert.ok(Math.abs(txt.created_at - Date.now() / 1000) < 60, String(txt.created_at));
      const pv = (f: FileObject) => f as FileObject & { content_type: string; user_id: string | null };
      assert.match(pv(txt).content_type, /^text\/plain/);
      assert.match(pv(md).content_type, /^text\/markdown/);
      assert.equal(pv(txt).user_id, null, "an unbound key uploading without user_id: the account's");

      assert.deepEqual(await h.client.files.retrieve(txt.id), txt);
      for (const [file, text] of [
        [txt, TXT],
        [md, MD],
      ] as const) {
        const content = await h.client.files.content(file.id);
        assert.equal(content.status, 200);
        assert.deepEqual(
          Buffer.from(await content.arrayBuffer()),
          Buffer.from(text),
          `${file.filename}: byte-identical`,
        );
      }

      const listed = await h.client.files.list();
      assert.deepEqual(
        listed.data.map((f) => f.id),
        [md.id, txt.id],
        'newest first',
      );
      const assistants = await h.client.files.list({ purpose: 'assistants' });
      assert.deepEqual(
        assistants.data.map((f) => f.id),
        [txt.id],
      );
      const first = await h.client.files.list({ limit: 1 });
      assert.deepEqual([first.data.map((f) => f.id), first.has_more], [[md.id], true]);
      const second = await h.client.files.list({ limit: 1, after: md.id });
      assert.deepEqual([second.data.map((f) => f.id), second.has_more], [[txt.id], false]);
    });

    it('vectorStores.create, files.createAndPoll with attributes, fileBatches.createAndPoll: counts and usage_bytes', async () => {
      store = await h.client.vectorStores.create({ name: 'Handbook', metadata: { team: 'support' } });
      assert.match(store.id, VS_ID);
      assert.equal(store.object, 'vector_store');
      assert.equal(store.name, 'Handbook');
      assert.deepEqual(store.metadata, { team: 'support' });
      assert.equal(store.usage_bytes, 0);
      assert.deepEqual(store.file_counts, { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 });
      assert.equal(store.status, 'completed', 'an empty store has nothing in progress');

      const attached = await h.client.vectorStores.files.createAndPoll(
        store.id,
        { file_id: txt.id, attributes: { team: 'red', year: 2026, public: true } },
        POLL,
      );
      assert.equal(attached.id, txt.id);
      assert.equal(attached.object, 'vector_store.file');
      assert.equal(attached.vector_store_id, store.id);
      assert.equal(attached.status, 'completed', JSON.stringify(attached.last_error));
      assert.equal(attached.last_error, null);
      assert.deepEqual(attached.attributes, { team: 'red', year: 2026, public: true });
      assert.equal(attached.chunking_strategy?.type, 'auto', "a file attached without a strategy has pvai's own");

      const batch = await h.client.vectorStores.fileBatches.createAndPoll(
        store.id,
        { file_ids: [md.id], attributes: { team: 'blue', year: 2025 } },
        POLL,
      );
      assert.match(batch.id, BATCH_ID);
      assert.equal(batch.object, 'vector_store.files_batch');
      assert.equal(batch.vector_store_id, store.id);
      assert.equal(batch.status, 'completed');
      assert.deepEqual(batch.file_counts, { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 });
      const batchFiles = await h.client.vectorStores.fileBatches.listFiles(batch.id, { vector_store_id: store.id });
      assert.deepEqual(
        batchFiles.data.map((f) => [f.id, f.status, f.attributes]),
        [[md.id, 'completed', { team: 'blue', year: 2025 }]],
      );

      const got = await h.client.vectorStores.retrieve(store.id);
      assert.deepEqual(got.file_counts, { in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 });
      assert.equal(got.usage_bytes, txt.bytes + md.bytes, 'the bytes of the files the store holds');
      assert.equal(got.status, 'completed');
      const files = await h.client.vectorStores.files.list(store.id);
      assert.deepEqual(
        files.data.map((f) => f.id),
        [md.id, txt.id],
      );
    });

    it('vectorStores.search finds the planted fact; its span is exact in vectorStores.files.content', async () => {
      const page = await h.client.vectorStores.search(store.id, { query: QUESTION });
      // The fact's chunk ranks at the top (fused-rank ties with the schedule's chunk may put it second).
      const sdkHit = page.data.findIndex((r) => r.content.some((c) => c.text.includes('7431-walrus')));
      assert.ok(sdkHit >= 0 && sdkHit < 2, `the fact ranks at the top: ${sdkHit}`);
      assert.equal(page.data[sdkHit]?.file_id, txt.id);
      const raw = await search(store.id, QUESTION);
      assert.equal(raw.object, 'vector_store.search_results.page');
      assert.equal(raw.search_query, QUESTION, 'the query as it was given');
      const first = raw.data.find((r) => r.content.some((c) => c.text.includes('7431-walrus')));
      assert.ok(first, JSON.stringify(raw.data));
      assert.equal(first.file_id, txt.id);
      assert.equal(first.filename, 'zephyr-notes.txt');
      assert.deepEqual(first.attributes, { team: 'red', year: 2026, public: true });
      assert.equal(first.page, null, 'a text file has no pages');
      assert.ok(first.chunk_id.length > 0);
      const text = first.content.map((c) => c.text).join('');
      assert.equal(first.content[0]?.type, 'text');
      assert.ok(text.includes('7431-walrus'), text);
      for (const r of raw.data) assert.ok(r.score >= 0 && r.score <= 1, `score ${r.score}`);

      const parts = await h.client.vectorStores.files.content(txt.id, { vector_store_id: store.id });
      const extracted = parts.data.map((p) => p.text ?? '').join('');
      assert.ok(extracted.includes(FACT), 'the extracted text holds the fact');
      assert.equal(extracted.slice(first.char_start, first.char_end), text, 'the span is exact');
      for (const r of raw.data) {
        const own = (await h.client.vectorStores.files.content(r.file_id, { vector_store_id: store.id })).data;
        const whole = own.map((p) => p.text ?? '').join('');
        assert.equal(whole.slice(r.char_start, r.char_end), r.content.map((c) => c.text).join(''), r.chunk_id);
      }
    });

    it('attribute filters narrow the results (eq, in, and); updating the attributes changes what they keep', async () => {
      const eqBlue: Filter = { type: 'eq', key: 'team', value: 'blue' };
      const eqRed: Filter = { type: 'eq', key: 'team', value: 'red' };
      assert.deepEqual(await fileIdsOf('Zephyr launch', eqBlue), new Set([md.id]));
      assert.deepEqual(await fileIdsOf('Zephyr launch', eqRed), new Set([txt.id]));
      assert.deepEqual(
        await fileIdsOf('Zephyr launch', { type: 'in', key: 'team', value: ['red', 'green'] }),
        new Set([txt.id]),
      );
      assert.deepEqual(
        await fileIdsOf('Zephyr launch', { type: 'in', key: 'team', value: ['red', 'blue'] }),
        new Set([txt.id, md.id]),
      );
      const redAnd = (year: Filter): Filter => ({ type: 'and', filters: [eqRed, year] });
      assert.deepEqual(
        await fileIdsOf('Zephyr launch', redAnd({ type: 'gte', key: 'year', value: 2026 })),
        new Set([txt.id]),
      );
      assert.deepEqual(
        await fileIdsOf('Zephyr launch', redAnd({ type: 'lt', key: 'year', value: 2026 })),
        new Set(),
        'and: both must hold',
      );
      const viaSdk = await h.client.vectorStores.search(store.id, { query: QUESTION, filters: eqBlue });
      assert.ok(
        viaSdk.data.every((r) => r.file_id === md.id),
        'the SDK sends the filter as it is',
      );

      const updated = await h.client.vectorStores.files.update(txt.id, {
        vector_store_id: store.id,
        attributes: { team: 'blue', year: 2024 },
      });
      assert.deepEqual(updated.attributes, { team: 'blue', year: 2024 });
      const retrieved = await h.client.vectorStores.files.retrieve(txt.id, { vector_store_id: store.id });
      assert.deepEqual(retrieved.attributes, { team: 'blue', year: 2024 });
      assert.deepEqual(await fileIdsOf(QUESTION, eqBlue), new Set([txt.id, md.id]), 'at once');
      assert.deepEqual(await fileIdsOf(QUESTION, eqRed), new Set());
      assert.deepEqual(await fileIdsOf(QUESTION, { type: 'lt', key: 'year', value: 2025 }), new Set([txt.id]));
    });

    it('lists page with after and has_more; auto-paging walks them all', async () => {
      const more: string[] = [];
      for (const name of ['p1', 'p2', 'p3']) more.push((await h.client.vectorStores.create({ name })).id);
      const all = [...more].reverse().concat(store.id);
      const first = await h.client.vectorStores.list({ limit: 2 });
      assert.deepEqual(
        first.data.map((s) => s.id),
        all.slice(0, 2),
      );
      assert.equal(first.has_more, true);
      const second = await h.client.vectorStores.list({ limit: 2, after: first.data[1]?.id ?? '' });
      assert.deepEqual(
        second.data.map((s) => s.id),
        all.slice(2, 4),
      );
      assert.equal(second.has_more, false);
      const asc = await h.client.vectorStores.list({ limit: 3, order: 'asc' });
      assert.deepEqual(
        asc.data.map((s) => s.id),
        [...all].reverse().slice(0, 3),
      );
      const walked: string[] = [];
      for await (const s of h.client.vectorStores.list({ limit: 1 })) walked.push(s.id);
      assert.deepEqual(walked, all);

      const files = await h.client.vectorStores.files.list(store.id, { limit: 1, order: 'asc' });
      assert.deepEqual([files.data.map((f) => f.id), files.has_more], [[txt.id], true]);
      const rest = await h.client.vectorStores.files.list(store.id, { limit: 1, order: 'asc', after: txt.id });
      assert.deepEqual([rest.data.map((f) => f.id), rest.has_more], [[md.id], false]);
      for (const id of more) await h.client.vectorStores.delete(id);
    });

    it('responses.create with file_search over the store: results and the citation name the file', async () => {
      h.upstream.reset();
      const res = await h.client.responses.create({
        model: 'PV-TURBO',
        input: QUESTION,
        tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
        include: ['file_search_call.results'],
      });
      const output = res.output as unknown as OutputItem[];
      const call = output.find((o) => o.type === 'file_search_call');
      assert.ok(call, JSON.stringify(output));
      assert.equal(call.status, 'completed');
      const results = call.results ?? [];
      const hit = results.find((r) => r.text.includes('7431-walrus'));
      assert.ok(hit, JSON.stringify(results));
      assert.equal(hit.file_id, txt.id);
      assert.equal(hit.filename, 'zephyr-notes.txt');
      assert.ok(results.every((r) => [txt.id, md.id].includes(r.file_id)));
      const prompt = systemText(chatRequests(h.upstream).at(-1));
      assert.match(prompt, /7431-walrus/, 'the model was given the planted fact');
      const annotations = output.find((o) => o.type === 'message')?.content?.[0]?.annotations ?? [];
      // "[1] [2]" cites the first two sources, the fact's chunk among them.
      const citation = annotations.find((a) => a.type === 'file_citation' && a.file_id === txt.id);
      assert.ok(citation, JSON.stringify(annotations));
      assert.equal(citation.filename, 'zephyr-notes.txt');
    });

    it("chat's vector_store_ids with use_rag: the citations name the file (document_id) and its filename (title)", async () => {
      const res = await h.server.request<{ citations?: CitationBody[] }>('POST', '/z1/chat/completions', {
        apiKey: h.apiKey,
        body: {
          model: 'PV-TURBO',
          user_id: 'someone',
          skip_cache: true,
          use_rag: true,
          vector_store_ids: [store.id],
          messages: [{ role: 'user', content: QUESTION }],
        },
      });
      assert.equal(res.status, 200, res.text);
      const first = res.body.citations?.find((c) => c.snippet.includes('7431-walrus'));
      assert.ok(first, res.text);
      assert.equal(first.document_id, txt.id);
      assert.equal(first.title, 'zephyr-notes.txt');
      assert.ok(first.snippet.includes('7431-walrus'), first.snippet);
    });

    it('deleting the file removes it from every store and leaves nothing of it searchable', async () => {
      const other = await h.client.vectorStores.create({ name: 'Second', file_ids: [txt.id] });
      const held = await h.client.vectorStores.files.poll(other.id, txt.id, POLL);
      assert.equal(held.status, 'completed');
      assert.ok((await fileIdsOf(QUESTION)).has(txt.id));

      const deleted = await h.client.files.delete(txt.id);
      assert.deepEqual(deleted, { id: txt.id, object: 'file', deleted: true });
      for (const id of [store.id, other.id]) {
        const found = await search(id, QUESTION);
        assert.ok(!found.data.some((r) => r.file_id === txt.id || r.content.some((c) => c.text.includes('walrus'))));
        const listed = await h.client.vectorStores.files.list(id);
        assert.ok(!listed.data.some((f) => f.id === txt.id), 'gone from the store');
        await assert.rejects(
          h.client.vectorStores.files.retrieve(txt.id, { vector_store_id: id }),
          (e: unknown) => e instanceof NotFoundError,
        );
      }
      const got = await h.client.vectorStores.retrieve(store.id);
      assert.deepEqual(got.file_counts, { in_progress: 0, completed: 1, failed: 0, cancelled: 0, total: 1 });
      assert.equal(got.usage_bytes, md.bytes);
      assert.equal((await h.client.vectorStores.retrieve(other.id)).file_counts.total, 0);
      await assert.rejects(h.client.files.retrieve(txt.id), (e: unknown) => e instanceof NotFoundError);
      await assert.rejects(h.client.files.content(txt.id), (e: unknown) => e instanceof NotFoundError);
      const responses = await h.client.responses.create({
        model: 'PV-TURBO',
        input: QUESTION,
        tools: [{ type: 'file_search', vector_store_ids: [store.id, other.id] }],
        include: ['file_search_call.results'],
      });
      const call = (responses.output as unknown as OutputItem[]).find((o) => o.type === 'file_search_call');
      assert.ok(!(call?.results ?? []).some((r) => r.file_id === txt.id || r.text.includes('walrus')));
    });

    it('removing a file from a store keeps the file; deleting the store keeps its files', async () => {
      const spare = await h.client.vectorStores.create({ name: 'Spare' });
      await h.client.vectorStores.files.createAndPoll(spare.id, { file_id: md.id }, POLL);
      const removed = await h.client.vectorStores.files.delete(md.id, { vector_store_id: spare.id });
      assert.deepEqual(removed, { id: md.id, object: 'vector_store.file.deleted', deleted: true });
      assert.deepEqual((await search(spare.id, 'Zephyr schedule April')).data, []);
      assert.equal((await h.client.files.retrieve(md.id)).id, md.id);

      const gone = await h.client.vectorStores.delete(store.id);
      assert.deepEqual(gone, { id: store.id, object: 'vector_store.deleted', deleted: true });
      await assert.rejects(h.client.vectorStores.retrieve(store.id), (e: unknown) => e instanceof NotFoundError);
      await assert.rejects(
        h.client.vectorStores.search(store.id, { query: QUESTION }),
        (e: unknown) => e instanceof NotFoundError,
      );
      assert.ok(!(await h.client.vectorStores.list()).data.some((s) => s.id === store.id));
      const kept = await h.client.files.retrieve(md.id);
      assert.equal(kept.bytes, md.bytes);
      const content = await h.client.files.content(md.id);
      assert.deepEqual(Buffer.from(await content.arrayBuffer()), Buffer.from(MD), 'the file is whole');
    });
  });
}
