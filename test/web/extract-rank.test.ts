import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Embedder } from '../../src/retrieval/index.js';
import { decodePage, htmlText, passages, rank, stripMarkup } from '../../src/web/index.js';
import { articlePage } from './pages.js';

describe('page text', () => {
  it('keeps the article and drops scripts, styles, navigation and comments, on both paths', async () => {
    for (const kb of [5, 200]) {
      const html = articlePage('Tide tables', 'High tide at Brest is at 14:32 &amp; low tide at 20:45.', kb);
      const { text, title } = await htmlText(html.replace('<nav>', '<!-- hidden comment --><style>.x{}</style><nav>'));
      assert.equal(title, 'Tide tables');
      assert.match(text, /High tide at Brest is at 14:32 & low tide at 20:45\./);
      assert.ok(!text.includes('do not read'), 'script text is gone');
      assert.ok(!text.includes('hidden comment') && !text.includes('.x{}'));
      assert.ok(!text.includes('About'), 'navigation is gone');
      assert.ok(!text.includes('Copyright footer'));
    }
  });

  it('strips hostile markup in linear time (unclosed tags, comments and elements cost a scan, not a square)', () => {
    const hostile = [
      'x'.repeat(10) + '<a'.repeat(1_000_000),
      `<p>ok</p>${'<!--'.repeat(500_000)}`,
      `<p>ok</p>${'<nav>'.repeat(400_000)}`,
      `<p>ok</p>${'<script>'.repeat(400_000)}`,
      `<title>${'<title>'.repeat(300_000)}`,
      '<p>'.repeat(500_000),
      `${'&amp'.repeat(500_000)}`,
    ];
    for (const page of hostile) {
      const started = performance.now();
      stripMarkup(page);
      const took = performance.now() - started;
      // Generous: a quadratic pass over these 2 MB inputs would take minutes.
      assert.ok(took < 3000, `${page.slice(0, 12)}…: ${took} ms`);
    }
    const { text, title } = stripMarkup(
      '<head><TITLE>Straße &amp; İstanbul</TITLE></head><body><P>İİİ one</P><Script>x</SCRIPT><p>two &#x263A;</p>',
    );
    assert.equal(title, 'Straße & İstanbul');
    assert.equal(text.replace(/\s+/g, ' ').trim(), 'İİİ one two ☺');
  });

  it('decodes the declared or meta charset, and survives bytes that are not valid in it', () => {
    const latin1 = Buffer.from('<meta charset="windows-1252"><p>caf\xe9 cr\xe8me</p>', 'latin1');
    assert.match(decodePage(latin1), /café crème/);
    assert.match(decodePage(Buffer.from('<p>na\xefve</p>', 'latin1'), 'iso-8859-1'), /naïve/);
    const broken = Buffer.concat([Buffer.from('<p>before '), Buffer.from([0xff, 0xc3]), Buffer.from(' after</p>')]);
    assert.match(decodePage(broken, 'utf-8'), /before .* after/);
    assert.match(decodePage(broken, 'no-such-charset'), /before .* after/);
  });
});

describe('passage ranking', () => {
  const candidates = [
    {
      page: 0,
      text: 'The automobile plant in Turin doubled its output of electric vehicles this spring.',
      fallback: false,
    },
    {
      page: 1,
      text: 'A recipe for sourdough bread: flour, water, salt, and a patient starter culture overnight.',
      fallback: false,
    },
    {
      page: 2,
      text: 'Car makers report that battery prices fell by a fifth, lowering the price of a new car.',
      fallback: false,
    },
  ];

  it('lexical: BM25 puts the passage with the question terms first', async () => {
    const ranked = await rank('Why did car prices fall?', candidates, undefined);
    assert.equal(ranked[0]?.page, 2);
    assert.equal(ranked.at(-1)?.score, 0);
  });

  it("lexical: words are text/'s, folded and without stop words, but not stemmed", async () => {
    const turin = await rank('Which plant in Turín?', candidates, undefined);
    assert.equal(turin[0]?.page, 0, '"Turín" finds "Turin"');
    assert.ok((turin[0]?.score ?? 0) > 0);
    const stopWords = await rank('what is the of and', candidates, undefined);
    assert.ok(
      stopWords.every((p) => p.score === 0),
      'a question of stop words alone matches nothing',
    );
    const inflected = await rank('vehicle', candidates, undefined);
    assert.ok(
      inflected.every((p) => p.score === 0),
      'no stems: "vehicle" is not "vehicles" (src/web/rank.ts says why)',
    );
  });

  it('hybrid: an embedder lifts a passage that matches in meaning, not in words', async () => {
    // A toy embedder: one dimension per concept, so "vehicles" and "automobile" are near "cars".
    const concepts = [/car|automobile|vehicle/i, /bread|sourdough|flour/i, /price|cost/i];
    const embedder: Embedder = {
      id: 'toy',
      dimension: async () => concepts.length,
      embed: async (texts) =>
        texts.map((t) => {
          const v = new Float32Array(concepts.map((c) => (c.test(t) ? 1 : 0)));
          const norm = Math.hypot(...v) || 1;
          return v.map((x) => x / norm);
        }),
      close: async () => {},
    };
    const lexical = await rank('automobile output', candidates, undefined);
    const hybrid = await rank('vehicle manufacturing', candidates, embedder);
    assert.equal(lexical[0]?.page, 0);
    // "vehicle" matches page 0 lexically; the embedder ranks page 2 (cars) above the bread recipe.
    assert.equal(hybrid[0]?.page, 0);
    assert.ok(hybrid.findIndex((p) => p.page === 2) < hybrid.findIndex((p) => p.page === 1));
  });

  it('splits long text into passages of a few hundred characters', () => {
    const text = Array.from({ length: 50 }, (_, i) => `Sentence number ${i} is about the harbour and its boats.`).join(
      ' ',
    );
    const parts = passages(text);
    assert.ok(parts.length > 2);
    assert.ok(
      parts.every((p) => p.length <= 1100),
      JSON.stringify(parts.map((p) => p.length)),
    );
  });
});
