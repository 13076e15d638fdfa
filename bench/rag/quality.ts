/** Quality on Cranfield: nDCG@10 and recall@100 per system, documents scored by their best chunk. */
import type { ChunkIndex, SearchMode, Tenant } from '../../src/retrieval/index.js';
import type { Corpus } from './corpus.js';
import { documentsOf, evaluate, type Quality } from './metrics.js';
import type { PeerIndex } from './peers.js';

/** Chunks asked for per query: enough distinct documents for recall@100 (Cranfield has ~2 chunks a document). */
export const CHUNK_DEPTH = 300;

export interface QualityRow extends Quality {
  system: string;
}

function runsToQuality(system: string, corpus: Corpus, runs: Map<string, string[]>): QualityRow {
  const docOf = new Map(corpus.chunks.map((c) => [c.id, c.documentId]));
  const docRuns = new Map(
    [...runs].map(([q, chunkIds]) => [q, documentsOf(chunkIds.map((id) => ({ documentId: docOf.get(id) ?? id })))]),
  );
  return { system, ...evaluate(docRuns, corpus.qrels) };
}

export async function peerQuality(peer: PeerIndex, corpus: Corpus): Promise<QualityRow> {
  const runs = new Map<string, string[]>();
  for (const q of corpus.queries) runs.set(q.id, await peer.search(q.text, CHUNK_DEPTH));
  return runsToQuality(peer.name, corpus, runs);
}

export async function indexQuality(
  label: string,
  index: ChunkIndex,
  tenant: Tenant,
  corpus: Corpus,
  mode: SearchMode,
): Promise<QualityRow> {
  const runs = new Map<string, string[]>();
  for (const q of corpus.queries) {
    const hits = await index.search(tenant, {
      text: q.text,
      vector: corpus.queryVectors.get(q.id),
      k: CHUNK_DEPTH,
      mode,
    });
    runs.set(
      q.id,
      hits.map((h) => h.chunkId),
    );
  }
  return runsToQuality(`pvai ${label} ${mode}`, corpus, runs);
}
