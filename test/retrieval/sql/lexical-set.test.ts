import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LexicalSet } from '../../../src/retrieval/sql/lexical-set.js';
import { analyze, encodeTerms, queryTerms } from '../../../src/text/index.js';

/** BM25 as written in the textbooks (k1 1.2, b 0.75, Lucene's IDF), over documents given as term lists. */
function referenceBm25(docs: Array<{ id: string; terms: string[] }>, query: string[], id: string): number {
  const n = docs.length;
  const avgdl = docs.reduce((sum, d) => sum + d.terms.length, 0) / n;
  const doc = docs.find((d) => d.id === id);
  if (!doc) return 0;
  let score = 0;
  for (const term of new Set(query)) {
    const df = docs.filter((d) => d.terms.includes(term)).length;
    const tf = doc.terms.filter((t) => t === term).length;
    if (df === 0 || tf === 0) continue;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    score += (idf * tf * 2.2) / (tf + 1.2 * (1 - 0.75 + (0.75 * doc.terms.length) / avgdl));
  }
  return score;
}

const texts: Record<string, string> = {
  c1: 'The boundary layer separates where the pressure gradient turns adverse.',
  c2: 'Heat transfer in a laminar boundary layer at hypersonic speeds; the heat flux doubles.',
  c3: 'Buckling of thin cylindrical shells under axial compression.',
  c4: 'Pressure distributions on an ogive forebody at zero angle of attack.',
  c5: 'Flutter of panels in supersonic flow, with heat.',
};

function build(): { set: LexicalSet; docs: Array<{ id: string; terms: string[] }> } {
  const set = new LexicalSet();
  const docs = Object.entries(texts).map(([id, text]) => ({ id, terms: analyze(text) }));
  for (const d of docs) set.upsert(d.id, `doc-${d.id}`, d.terms);
  return { set, docs };
}

describe('lexical analysis', () => {
  it('folds case and accents, drops stop words, stems, and keeps repeats as term frequency', () => {
    assert.deepEqual(analyze('The Flows of the flowing FLOW — café'), ['flow', 'flow', 'flow', 'cafe']);
    assert.equal(encodeTerms('Heated layers; heat!'), 'heat layer heat');
    assert.deepEqual(queryTerms('what is the heat of heated layers?'), ['heat', 'layer']);
    assert.deepEqual(queryTerms('to be or not to be'), [], 'a query of stop words alone has no terms');
    assert.deepEqual(analyze('version 2 of x42'), ['version', '2', 'x42']);
  });
});

describe('LexicalSet', () => {
  it('scores every match exactly as textbook BM25 does, best first', () => {
    const { set, docs } = build();
    const query = queryTerms('heat transfer in the boundary layer');
    const hits = set.search(query, 10);
    assert.deepEqual(
      hits.map((h) => h.id),
      ['c2', 'c1', 'c5'],
      'only chunks with a query term, best first',
    );
    for (const hit of hits) {
      assert.ok(Math.abs(hit.score - referenceBm25(docs, query, hit.id)) < 1e-9, `${hit.id} scored ${hit.score}`);
    }
    assert.deepEqual(
      set.search(query, 1).map((h) => h.id),
      ['c2'],
      'k cuts the ranking',
    );
    assert.deepEqual(set.search(['unknown'], 10), []);
  });

  it('removes a document, replaces a chunk, and scores with the live statistics only', () => {
    const { set, docs } = build();
    set.removeDocument('doc-c2');
    set.upsert('c5', 'doc-c5', analyze('Flutter of panels in supersonic flow, with heat and more heat.'));
    assert.equal(set.size, 4);
    const live = docs.filter((d) => d.id !== 'c2' && d.id !== 'c5');
    live.push({ id: 'c5', terms: analyze('Flutter of panels in supersonic flow, with heat and more heat.') });
    const query = queryTerms('heat boundary');
    const hits = set.search(query, 10);
    assert.deepEqual(
      hits.map((h) => h.id),
      ['c5', 'c1'],
    );
    for (const hit of hits) assert.ok(Math.abs(hit.score - referenceBm25(live, query, hit.id)) < 1e-9);
  });

  it('compacts once dead rows outnumber the live ones, and still finds and removes what is left', () => {
    const set = new LexicalSet();
    for (let doc = 0; doc < 30; doc++) {
      for (let c = 0; c < 100; c++) set.upsert(`d${doc}c${c}`, `d${doc}`, ['common', `doc${doc}`, `chunk${c}`]);
    }
    for (let doc = 0; doc < 25; doc++) set.removeDocument(`d${doc}`);
    assert.equal(set.size, 500);
    const hits = set.search(['doc27', 'chunk3'], 3);
    assert.equal(hits[0]?.id, 'd27c3');
    assert.equal(set.search(['doc3'], 5).length, 0, 'a removed document is gone');
    assert.equal(set.search(['common'], 1000).length, 500);
    set.removeDocument('d27');
    assert.equal(set.search(['doc27'], 10).length, 0);
    set.upsert('d27c3', 'd27', ['back']);
    assert.deepEqual(
      set.search(['back', 'doc27'], 10).map((h) => h.id),
      ['d27c3'],
    );
  });

  it('breaks ties by the order chunks were indexed in', () => {
    const set = new LexicalSet();
    for (const id of ['b', 'a', 'c']) set.upsert(id, 'd', ['same', 'words']);
    assert.deepEqual(
      set.search(['same'], 3).map((h) => h.id),
      ['b', 'a', 'c'],
    );
  });
});
