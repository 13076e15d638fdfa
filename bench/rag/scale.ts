/**
 * One backend at scale (bench:rag-scale): a tenant grown to `size` synthetic chunks (synthetic.ts) through
 * `ChunkIndex.putDocuments/putVectors` in bulk: 20 new documents of 50 chunks a `putDocuments`, then each
 * document's 50 vectors in one `putVectors` (the worker writes one such ~26 KB document a claim and its
 * vectors 16 at a time, as fast as one embedding thread gives them: this is the index's own ceiling); then `index.search` (k = 10) per mode with Cranfield's queries
 * and their real vectors; then the same hybrid queries while another `extra` chunks are ingested.
 * Ingestion MB/s counts the chunks' text bytes over the time spent in the index's calls only (generating
 * the corpus is not timed). RSS and disk are read from /proc and `du` by the caller's `probe`.
 */
import { performance } from 'node:perf_hooks';
import type { ChunkIndex, SearchMode, Tenant } from '../../src/retrieval/index.js';
import type { Corpus } from './corpus.js';
import { percentile } from './metrics.js';
import { CHUNKS_PER_DOC, type SyntheticCorpus } from './synthetic.js';

const K = 10;
const DOCS_PER_WRITE = 20;
const TENANT: Tenant = { accountId: 'acct_scale', userId: 'user_scale' };

export interface Timing {
  mode: string;
  p50: number;
  p95: number;
  n: number;
}

export interface Ingested {
  chunks: number;
  seconds: number;
  mb: number;
}

/** Writes documents [from, to) of the synthetic corpus; `progress` after each write. */
export async function ingest(
  index: ChunkIndex,
  synthetic: SyntheticCorpus,
  fromDoc: number,
  toDoc: number,
  progress?: (done: number) => void,
): Promise<Ingested> {
  let ms = 0;
  let bytes = 0;
  let chunks = 0;
  for (let d = fromDoc; d < toDoc; d += DOCS_PER_WRITE) {
    const docs = [];
    for (let i = d; i < Math.min(toDoc, d + DOCS_PER_WRITE); i++) docs.push(synthetic.document(i));
    const started = performance.now();
    await index.putDocuments(
      TENANT,
      docs.map((doc) => ({ documentId: doc.documentId, chunks: doc.chunks, fresh: true })),
    );
    for (const doc of docs) await index.putVectors(TENANT, doc.documentId, doc.vectors);
    ms += performance.now() - started;
    for (const doc of docs) {
      bytes += doc.bytes;
      chunks += doc.chunks.length;
    }
    progress?.(chunks);
  }
  return { chunks, seconds: ms / 1000, mb: bytes / 1e6 };
}

async function timeOne(index: ChunkIndex, corpus: Corpus, q: number, mode: SearchMode): Promise<number> {
  const query = corpus.queries[q % corpus.queries.length] as Corpus['queries'][number];
  const vector = corpus.queryVectors.get(query.id);
  const started = performance.now();
  await index.search(TENANT, { text: query.text, vector, k: K, mode });
  return performance.now() - started;
}

/** The first search (an embedded index loads the tenant from its database on it), in ms. */
export function firstSearch(index: ChunkIndex, corpus: Corpus): Promise<number> {
  return timeOne(index, corpus, 0, 'hybrid');
}

/** p50/p95 of `queries` searches per mode, after 5 of warm-up. */
export async function timeModes(
  index: ChunkIndex,
  corpus: Corpus,
  modes: readonly SearchMode[],
  queries: number,
): Promise<Timing[]> {
  const rows: Timing[] = [];
  for (const mode of modes) {
    for (let q = 0; q < 5; q++) await timeOne(index, corpus, q, mode);
    const samples: number[] = [];
    for (let q = 0; q < queries; q++) samples.push(await timeOne(index, corpus, q, mode));
    rows.push({ mode, p50: percentile(samples, 0.5), p95: percentile(samples, 0.95), n: samples.length });
  }
  return rows;
}

/**
 * Hybrid searches one after another (each as soon as the last answered) for as long as ingestion of
 * `extra` more chunks runs beside them: in the same process, as in the embedded server, so a search waits
 * for what a write holds of the event loop; on Qdrant the writes and its optimiser share its CPUs.
 */
export async function timeWhileIngesting(
  index: ChunkIndex,
  synthetic: SyntheticCorpus,
  corpus: Corpus,
  size: number,
  extra: number,
): Promise<{ timing: Timing; ingested: Ingested }> {
  const first = Math.ceil(size / CHUNKS_PER_DOC);
  let done = false;
  const writing = ingest(index, synthetic, first, first + Math.ceil(extra / CHUNKS_PER_DOC)).finally(() => {
    done = true;
  });
  const samples: number[] = [];
  for (let q = 0; !done; q++) samples.push(await timeOne(index, corpus, q, 'hybrid'));
  const ingested = await writing;
  return {
    timing: { mode: 'hybrid', p50: percentile(samples, 0.5), p95: percentile(samples, 0.95), n: samples.length },
    ingested,
  };
}
