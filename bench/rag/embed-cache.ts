/**
 * Vectors of the benchmark's texts, cached on disk (data/bench/, gitignored) by the embedder id and a hash
 * of each text, so a rerun embeds only what changed (a new chunker setting, new queries). Embedding
 * Cranfield's ~2,800 chunks takes minutes on 2 cores; the cached vectors are the ones pvai's embedder
 * produced, byte for byte.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Embedder } from '../../src/retrieval/index.js';

const hash = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

export class EmbeddingCache {
  readonly #file: string;
  readonly #vectors = new Map<string, Float32Array>();
  #dirty = false;

  constructor(file: string) {
    this.#file = file;
    if (existsSync(file)) {
      const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
      for (const [key, b64] of Object.entries(stored)) {
        const bytes = Buffer.from(b64, 'base64');
        this.#vectors.set(key, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice());
      }
    }
  }

  get size(): number {
    return this.#vectors.size;
  }

  missing(texts: readonly string[]): string[] {
    return [...new Set(texts.filter((t) => !this.#vectors.has(hash(t))))];
  }

  /** Vectors for the texts, embedding the missing ones in batches (progress on stderr), saved as it goes. */
  async vectors(embedder: Embedder, texts: readonly string[], label: string): Promise<Float32Array[]> {
    const missing = this.missing(texts);
    const started = Date.now();
    for (let i = 0; i < missing.length; i += 32) {
      const batch = missing.slice(i, i + 32);
      const vectors = await embedder.embed(batch);
      for (const [j, t] of batch.entries()) this.#vectors.set(hash(t), vectors[j] as Float32Array);
      this.#dirty = true;
      if ((i / 32) % 10 === 9) this.save();
      const done = Math.min(missing.length, i + 32);
      process.stderr.write(
        `\r  embedding ${label}: ${done}/${missing.length} (${Math.round((Date.now() - started) / 1000)} s)`,
      );
    }
    if (missing.length > 0) process.stderr.write('\n');
    this.save();
    return texts.map((t) => this.#vectors.get(hash(t)) as Float32Array);
  }

  save(): void {
    if (!this.#dirty) return;
    mkdirSync(dirname(this.#file), { recursive: true });
    const out: Record<string, string> = {};
    for (const [key, v] of this.#vectors)
      out[key] = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
    writeFileSync(`${this.#file}.tmp`, JSON.stringify(out));
    renameSync(`${this.#file}.tmp`, this.#file);
    this.#dirty = false;
  }
}
