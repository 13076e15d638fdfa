import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { LocalEmbedder } from '../../../src/retrieval/index.js';
import { EMBEDDING_MODEL } from '../../support/documents.js';

describe('LocalEmbedder', () => {
  const embedder = new LocalEmbedder({ modelPath: EMBEDDING_MODEL });
  after(() => embedder.close());

  it('embeds a text longer than the model window (cut, not refused) into a unit vector', async () => {
    // Digits and commas: about one token per character, so 720 characters are past MiniLM's 512 tokens.
    const [vector] = await embedder.embed(['1,'.repeat(360), 'a short sentence']);
    assert.equal(vector?.length, 384);
    const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-4, String(norm));
  });
});
