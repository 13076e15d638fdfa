/**
 * Lexical indexing throughput: Cranfield's text through the chunker into the index, timed, the way the
 * ingestion worker writes it — a backlog of small documents CLAIM_SMALL per write and LEXICAL_LANES
 * writes at once (its claims and lanes), a document above SMALL_BYTES on its own (in a lane of its own)
 * — and, for comparison, one write per small document, one at a time (a lone upload's path).
 */
import { performance } from 'node:perf_hooks';
import { chunkText } from '../../../src/rag/chunker.js';
import { CLAIM_SMALL, LEXICAL_LANES, SMALL_BYTES } from '../../../src/rag/rag-service.js';
import type { ChunkIndex, Tenant } from '../../../src/rag/types.js';
import type { Corpus } from './corpus.js';

export interface IngestRow {
  backend: string;
  /** How the text came, e.g. `1400 documents, 64 per write`. */
  shape: string;
  mb: number;
  seconds: number;
  /** Whether the ≥ 5 MB/s target applies (the worker's own way of writing). */
  target: boolean;
}

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

/** Cranfield's documents as the worker takes a backlog of them (timed), into `index`. */
export async function putCranfield(label: string, index: ChunkIndex, tenant: Tenant, c: Corpus): Promise<IngestRow> {
  const texts = c.docs.map((d) => ({ id: d.id, text: d.text }));
  if (texts.some((t) => Buffer.byteLength(t.text) > SMALL_BYTES)) throw new Error('a Cranfield document is not small');
  const seconds = await put(index, tenant, texts, CLAIM_SMALL, LEXICAL_LANES);
  return {
    backend: label,
    shape: `${texts.length} documents, ${CLAIM_SMALL} per write, ${LEXICAL_LANES} writes at once`,
    mb: megabytes(texts),
    seconds,
    target: true,
  };
}

/** The other two shapes, each on a fresh index from `open`. */
export async function otherShapes(
  label: string,
  open: () => Promise<ChunkIndex>,
  tenant: Tenant,
  c: Corpus,
): Promise<IngestRow[]> {
  const rows: IngestRow[] = [];
  const small = c.docs.map((d) => ({ id: d.id, text: d.text }));
  const one = await open();
  rows.push({
    backend: label,
    shape: `${small.length} documents, one write each, one at a time`,
    mb: megabytes(small),
    seconds: await put(one, tenant, small, 1),
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
  const big = await open();
  rows.push({
    backend: label,
    shape: `${large.length} documents of ~100 kB, one a write, ${LEXICAL_LANES} writes at once`,
    mb: megabytes(large),
    seconds: await put(big, tenant, large, 1, LEXICAL_LANES),
    target: true,
  });
  await big.close();
  return rows;
}
