import { bm25Idf, bm25TermWeight } from '../../text/index.js';
import { TopK } from './top-k.js';

/**
 * One tenant's chunks as an inverted index in memory, scored by BM25 (text/bm25.ts: k1 1.2, b 0.75,
 * Lucene's IDF, never negative). Each term keeps its rows and term frequencies in typed arrays, so a query touches
 * only its terms' postings: ~2 ms at 100k chunks where SQLite FTS5's bm25() took 144 ms p50 (it scores
 * each matching row through its auxiliary-function API; docs/decisions.md). Statistics (N, document
 * frequencies, average length) are the tenant's own: another tenant's documents never shift a score.
 *
 * Removal marks rows dead (document frequencies then count live rows at query time); once dead rows
 * outnumber the live ones the set is rebuilt without them.
 */
export interface LexicalHit {
  id: string;
  score: number;
}

interface Postings {
  rows: Uint32Array;
  tfs: Uint16Array;
  n: number;
}

export class LexicalSet {
  #ids: string[] = [];
  #docs: string[] = [];
  #lengths = new Uint32Array(0);
  #alive = new Uint8Array(0);
  #count = 0;
  #live = 0;
  #dead = 0;
  #totalLength = 0;
  #rowOf = new Map<string, number>();
  #rowsOfDoc = new Map<string, number[]>();
  #postings = new Map<string, Postings>();
  /** Per-row accumulators for a search, zeroed again after each (only the rows it touched). */
  #scores = new Float64Array(0);
  #touched = new Uint32Array(0);

  /** Live chunks. */
  get size(): number {
    return this.#live;
  }

  /** Adds the chunk with its terms (repeats are its term frequencies), or replaces it. */
  upsert(id: string, documentId: string, terms: readonly string[]): void {
    const old = this.#rowOf.get(id);
    if (old !== undefined) {
      this.#kill(old);
      if (this.#dead > 1024 && this.#dead > this.#live) this.#compact();
    }
    if (this.#count === this.#lengths.length) this.#grow();
    const row = this.#count++;
    this.#ids[row] = id;
    this.#docs[row] = documentId;
    this.#lengths[row] = terms.length;
    this.#alive[row] = 1;
    this.#live++;
    this.#totalLength += terms.length;
    this.#rowOf.set(id, row);
    this.#addToDocument(documentId, row);
    const tf = new Map<string, number>();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    for (const [term, count] of tf) this.#post(term, row, Math.min(count, 0xffff));
  }

  removeDocument(documentId: string): void {
    const rows = this.#rowsOfDoc.get(documentId);
    if (!rows) return;
    this.#rowsOfDoc.delete(documentId);
    for (const row of rows) if (this.#alive[row]) this.#kill(row, false);
    if (this.#dead > 1024 && this.#dead > this.#live) this.#compact();
  }

  /** The `k` best chunks for the query's terms by BM25, best first (ties: the earlier indexed first). */
  search(terms: readonly string[], k: number): LexicalHit[] {
    const live = this.#live;
    if (live === 0 || k <= 0) return [];
    const averageLength = this.#totalLength / live || 1;
    const scores = this.#scores;
    const touched = this.#touched;
    const lengths = this.#lengths;
    const alive = this.#alive;
    let touchedCount = 0;
    for (const term of new Set(terms)) {
      const p = this.#postings.get(term);
      if (!p) continue;
      const df = this.#dead === 0 ? p.n : this.#liveIn(p);
      if (df === 0) continue;
      const idf = bm25Idf(live, df);
      const { rows, tfs, n } = p;
      for (let i = 0; i < n; i++) {
        const row = rows[i] as number;
        if (alive[row] === 0) continue;
        const s = idf * bm25TermWeight(tfs[i] as number, lengths[row] as number, averageLength);
        if (scores[row] === 0) touched[touchedCount++] = row;
        scores[row] = (scores[row] as number) + s;
      }
    }
    const best = new TopK(Math.min(k, touchedCount));
    let floor = best.floor;
    for (let i = 0; i < touchedCount; i++) {
      const row = touched[i] as number;
      const s = scores[row] as number;
      scores[row] = 0;
      if (s > floor) {
        best.offer(row, s);
        floor = best.floor;
      }
    }
    return best.best().map(({ row, score }) => ({ id: this.#ids[row] as string, score }));
  }

  #post(term: string, row: number, tf: number): void {
    let p = this.#postings.get(term);
    if (!p) {
      p = { rows: new Uint32Array(4), tfs: new Uint16Array(4), n: 0 };
      this.#postings.set(term, p);
    } else if (p.n === p.rows.length) {
      const rows = new Uint32Array(p.n * 2);
      rows.set(p.rows);
      const tfs = new Uint16Array(p.n * 2);
      tfs.set(p.tfs);
      p.rows = rows;
      p.tfs = tfs;
    }
    p.rows[p.n] = row;
    p.tfs[p.n] = tf;
    p.n++;
  }

  #liveIn(p: Postings): number {
    let df = 0;
    for (let i = 0; i < p.n; i++) df += this.#alive[p.rows[i] as number] as number;
    return df;
  }

  /** Marks a row dead (its postings stay until the next compaction). */
  #kill(row: number, fromDocument = true): void {
    this.#alive[row] = 0;
    this.#live--;
    this.#dead++;
    this.#totalLength -= this.#lengths[row] as number;
    const id = this.#ids[row] as string;
    if (this.#rowOf.get(id) === row) this.#rowOf.delete(id);
    if (fromDocument) {
      const doc = this.#docs[row] as string;
      const rows = this.#rowsOfDoc.get(doc)?.filter((r) => r !== row);
      if (rows && rows.length > 0) this.#rowsOfDoc.set(doc, rows);
      else this.#rowsOfDoc.delete(doc);
    }
  }

  #grow(): void {
    const capacity = Math.max(256, this.#lengths.length * 2);
    const lengths = new Uint32Array(capacity);
    lengths.set(this.#lengths);
    const alive = new Uint8Array(capacity);
    alive.set(this.#alive);
    this.#lengths = lengths;
    this.#alive = alive;
    this.#scores = new Float64Array(capacity);
    this.#touched = new Uint32Array(capacity);
  }

  /** Renumbers the live rows from 0 (in their order) and drops the dead ones' postings. */
  #compact(): void {
    const newRow = new Int32Array(this.#count).fill(-1);
    const ids: string[] = [];
    const docs: string[] = [];
    let next = 0;
    for (let row = 0; row < this.#count; row++) {
      if (!this.#alive[row]) continue;
      newRow[row] = next;
      ids[next] = this.#ids[row] as string;
      docs[next] = this.#docs[row] as string;
      this.#lengths[next] = this.#lengths[row] as number;
      next++;
    }
    this.#alive.fill(0);
    this.#alive.fill(1, 0, next);
    for (const [term, p] of this.#postings) {
      let n = 0;
      for (let i = 0; i < p.n; i++) {
        const row = newRow[p.rows[i] as number] as number;
        if (row < 0) continue;
        p.rows[n] = row;
        p.tfs[n] = p.tfs[i] as number;
        n++;
      }
      if (n === 0) this.#postings.delete(term);
      else p.n = n;
    }
    this.#ids = ids;
    this.#docs = docs;
    this.#count = next;
    this.#dead = 0;
    this.#rowOf = new Map(ids.map((id, row) => [id, row]));
    this.#rowsOfDoc = new Map();
    for (const [row, doc] of docs.entries()) this.#addToDocument(doc, row);
  }

  #addToDocument(documentId: string, row: number): void {
    const rows = this.#rowsOfDoc.get(documentId);
    if (rows) rows.push(row);
    else this.#rowsOfDoc.set(documentId, [row]);
  }
}
