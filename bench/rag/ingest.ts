/**
 * Lexical indexing throughput: Cranfield's text through the chunker into the index, timed, the way the
 * ingestion worker writes it — a backlog of small documents `claimSmall` per write and `lanes`
 * writes at once (its claims and lanes), a document above `smallBytes` on its own (in a lane of its own)
 * — and, for comparison, one write per small document, one at a time (a lone upload's path).
 *
 * A target shape is timed ROUNDS times, each into a fresh index, and its median reported with the spread:
 * one pass takes ~0.1–0.4 s, and single passes of the same code moved by up to 2× between runs here
 * (a collector pause or a busy neighbour is a large part of 0.3 s).
 */
import { performance } from 'node:perf_hooks';
import { chunkText, DEFAULT_INGESTION } from '../../src/documents/index.js';
import type { ChunkIndex, Tenant } from '../../src/retrieval/index.js';
import type { Corpus } from './corpus.js';

export interface IngestRow {
  backend: string;
  /** How the text came, e.g. `1400 documents, 64 per write`. */
  shape: string;
  mb: number;
  /** The median round's. */
  seconds: number;
  /** Every round's, in the order they ran (one for a shape timed once). */
  rounds: number[];
  /** Whether the ≥ 5 MB/s target applies (the worker's own way of writing). */
  target: boolean;
}

/** Timed passes of each target shape. */
export const ROUNDS = 5;

/** Documents of Cranfield joined into this many (~100 kB each), for lexical indexing of large documents. */
const LARGE_DOCUMENTS = 14;

interface Text {
  id: string;
  text: string;
}

const megabytes = (texts: readonly Text[]) => texts.reduce((sum, t) => sum + Buffer.byteLength(t.text), 0) / 1e6;

/** Puts the documents `perWrite` at a time, `lanes` writes at once (chunking included); seconds taken. */
async function put(
  index: ChunkIndex,
  tenant: Tenant,
  texts: readonly Text[],
  perWrite: number,
  lanes = 1,
): Promise<number> {
  const t0 = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < texts.length; i += perWrite) {
    if (inFlight.length === lanes) await inFlight.shift();
    inFlight.push(
      index.putDocuments(
        tenant,
        // Fresh, as on the worker's first claim of a document: nothing of it was indexed before.
        texts.slice(i, i + perWrite).map((d) => ({ documentId: d.id, chunks: chunkText(d.id, d.text), fresh: true })),
      ),
    );
  }
  await Promise.all(inFlight);
  return (performance.now() - t0) / 1000;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** `rounds` passes of `measure`, the first into `first` when given (kept open), the others into fresh indexes. */
async function timed(
  measure: (index: ChunkIndex) => Promise<number>,
  open: () => Promise<ChunkIndex>,
  rounds: number,
  first?: ChunkIndex,
): Promise<{ seconds: number; rounds: number[] }> {
  const all: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const index = i === 0 && first ? first : await open();
    all.push(await measure(index));
    if (index !== first) await index.close();
  }
  return { seconds: median(all), rounds: all };
}

/**
 * Cranfield's documents as the worker takes a backlog of them (timed), into `index` (kept: the quality
 * phase searches it), then `rounds - 1` more times into fresh indexes.
 */
export async function putCranfield(
  label: string,
  index: ChunkIndex,
  open: () => Promise<ChunkIndex>,
  tenant: Tenant,
  c: Corpus,
  rounds = ROUNDS,
): Promise<IngestRow> {
  const texts = c.docs.map((d) => ({ id: d.id, text: d.text }));
  if (texts.some((t) => Buffer.byteLength(t.text) > DEFAULT_INGESTION.smallBytes))
    throw new Error('a Cranfield document is not small');
  const backlog = (into: ChunkIndex) => put(into, tenant, texts, DEFAULT_INGESTION.claimSmall, DEFAULT_INGESTION.lanes);
  return {
    backend: label,
    shape: `${texts.length} documents, ${DEFAULT_INGESTION.claimSmall} per write, ${DEFAULT_INGESTION.lanes} writes at once`,
    mb: megabytes(texts),
    ...(await timed(backlog, open, rounds, index)),
    target: true,
  };
}

/** The other two shapes, each on a fresh index from `open`. */
export async function otherShapes(
  label: string,
  open: () => Promise<ChunkIndex>,
  tenant: Tenant,
  c: Corpus,
  rounds = ROUNDS,
): Promise<IngestRow[]> {
  const rows: IngestRow[] = [];
  const small = c.docs.map((d) => ({ id: d.id, text: d.text }));
  const one = await open();
  // Once: ~1,400 writes, each a round trip, so it is long enough to time in one pass.
  const oneSeconds = await put(one, tenant, small, 1);
  rows.push({
    backend: label,
    shape: `${small.length} documents, one write each, one at a time`,
    mb: megabytes(small),
    seconds: oneSeconds,
    rounds: [oneSeconds],
    target: false,
  });
  await one.close();

  const per = Math.ceil(small.length / LARGE_DOCUMENTS);
  const large: Text[] = [];
  for (let i = 0; i < small.length; i += per) {
    const text = small
      .slice(i, i + per)
      .map((d) => d.text)
      .join('\n\n');
    large.push({ id: `large${large.length}`, text });
  }
  const each = (into: ChunkIndex) => put(into, tenant, large, 1, DEFAULT_INGESTION.lanes);
  rows.push({
    backend: label,
    shape: `${large.length} documents of ~100 kB, one a write, ${DEFAULT_INGESTION.lanes} writes at once`,
    mb: megabytes(large),
    ...(await timed(each, open, rounds)),
    target: true,
  });
  return rows;
}
