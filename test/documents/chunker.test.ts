import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHUNK_CHARS, chunkText } from '../../src/documents/chunker.js';

describe('chunkText', () => {
  const text = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} says something about topic ${i % 7}.`).join(
    ' ',
  );

  it('covers the text with windows whose text is exactly their span, on sentence ends, overlapping', () => {
    const chunks = chunkText('d', text);
    assert.ok(chunks.length > 2);
    for (const c of chunks) {
      assert.equal(text.slice(c.charStart, c.charEnd), c.text);
      assert.ok(c.text.length <= CHUNK_CHARS);
      assert.ok(c.text.endsWith('.'), `ends on a sentence: …${c.text.slice(-20)}`);
    }
    for (let i = 1; i < chunks.length; i++) {
      assert.ok((chunks[i]?.charStart ?? 0) < (chunks[i - 1]?.charEnd ?? 0), 'windows overlap');
    }
    assert.equal(chunks.at(-1)?.charEnd, text.length);
  });

  it('never crosses a page and says which page each chunk is on', () => {
    const source = 'First page text.\n\nSecond page text.\n\nThird.';
    const starts = [0, source.indexOf('Second'), source.indexOf('Third')];
    const chunks = chunkText('d', source, starts);
    assert.deepEqual(
      chunks.map((c) => [c.text, c.page]),
      [
        ['First page text.', 1],
        ['Second page text.', 2],
        ['Third.', 3],
      ],
    );
  });

  it('cuts a text without boundaries anywhere and makes nothing of whitespace', () => {
    assert.ok(chunkText('d', 'x'.repeat(3000)).every((c) => c.text.length <= CHUNK_CHARS));
    assert.deepEqual(chunkText('d', '   \n\n '), []);
  });
});
