/**
 * npm run bench:rag — retrieval quality, latency and ingestion of pvai's RAG, in one run, on Cranfield
 * (1,400 aeronautics abstracts, 225 queries, graded judgements; ../shared/datasets/cranfield).
 *
 * - Quality: nDCG@10 and recall@100 of pvai lexical / dense / hybrid on each backend, beside MiniSearch,
 *   Orama and wink-bm25-text-search on the same chunks (pvai's chunker) and queries. A document scores
 *   its best chunk.
 * - Latency: ChunkIndex.search p50/p95 at 1k, 10k, 100k chunks of one user (synthetic: Cranfield chunks
 *   repeated with random unit vectors), per mode; the query's embedding time apart.
 * - Ingestion: lexical indexing MB/s (chunker + putDocuments, as the ingestion worker writes); embedding tokens/s through pvai's
 *   LocalEmbedder ÷ node-llama-cpp directly; a 1 MB upload through the HTTP server.
 *
 * - Through HTTP (bench/rag-vector-stores.ts, bench/upload-rss.ts): Cranfield via /z1/rag/documents + /z1/rag/search
 *   beside /z1/files + file_batches + /z1/vector_stores/{id}/search (nDCG@10 within ±0.005, ingestion MB/s), and a
 *   100 MiB streamed POST /z1/files (the server's RSS growth < 50 MB), in quick mode too.
 *
 * `--quick`: fewer queries for latency, 1k chunks only, a smaller embedding sample, no 1 MB upload.
 * Vectors of Cranfield's chunks and queries are cached in data/bench/ (the first run embeds them: minutes).
 */
import os from 'node:os';
import type { ChunkIndex, SearchMode, Tenant } from '../src/retrieval/index.js';
import { cpuStealMeter, table } from './lib.js';
import { type Backend, postgresBackend, qdrantBackend, sqliteBackend } from './rag/backends.js';
import { benchEmbedder, type Corpus, loadCorpus, THREADS } from './rag/corpus.js';
import { measureEmbedding, queryEmbeddingTimes } from './rag/embedding.js';
import { type IngestRow, otherShapes, putCranfield, ROUNDS } from './rag/ingest.js';
import { grow, type LatencyRow, SIZES, timeSearches } from './rag/latency.js';
import { percentile } from './rag/metrics.js';
import { allPeers } from './rag/peers.js';
import { qdrantAvailable, startQdrant } from './rag/qdrant-process.js';
import { indexQuality, peerQuality, type QualityRow } from './rag/quality.js';
import { measureUpload, type UploadResult } from './rag/upload.js';
import { parityAll, parityIngestRows, parityQualityTable, parityTargets } from './rag-vector-stores.js';
import { uploadRssAll, uploadRssRows, uploadRssTargets } from './upload-rss.js';

const quick = process.argv.includes('--quick');
const MODES: SearchMode[] = ['hybrid', 'lexical', 'dense'];
const LATENCY_QUERIES = quick ? 30 : 225;
const sizes = quick ? SIZES.slice(0, 1) : SIZES;
const EMBED_SAMPLE = quick ? 48 : 320;
/** Timed passes per lexical-indexing target (ingest.ts says why five). */
const INGEST_ROUNDS = quick ? 1 : ROUNDS;
const tenant: Tenant = { accountId: 'acct_bench', userId: 'bench' };

const log = (msg: string) => process.stderr.write(`[bench:rag] ${msg}\n`);
const steal = cpuStealMeter();
const started = new Date();

const embedder = benchEmbedder();
const corpus = await loadCorpus(embedder);
const embedding = { id: embedder.id, dimension: await embedder.dimension() };
log(`${corpus.docs.length} documents, ${corpus.chunks.length} chunks, ${corpus.queries.length} queries`);

const quality: QualityRow[] = [];
for (const peer of await allPeers(corpus.chunks)) {
  quality.push(await peerQuality(peer, corpus));
  log(`quality ${peer.name} done`);
}

const ingest: IngestRow[] = [];
const latency: LatencyRow[] = [];

/** Cranfield into the index as the worker takes a backlog (timed: lexical indexing), then the cached vectors. */
async function loadCranfield(backend: Backend, index: ChunkIndex, c: Corpus): Promise<void> {
  const open = () => backend.open(embedding);
  ingest.push(await putCranfield(backend.label, index, open, tenant, c, INGEST_ROUNDS));
  const byDoc = new Map<string, typeof c.chunks>();
  for (const chunk of c.chunks) byDoc.set(chunk.documentId, [...(byDoc.get(chunk.documentId) ?? []), chunk]);
  for (const [documentId, chunks] of byDoc) {
    await index.putVectors(
      tenant,
      documentId,
      chunks.map((chunk) => ({ chunkId: chunk.id, vector: c.chunkVectors.get(chunk.id) as Float32Array })),
    );
  }
}

const notes: string[] = [];

async function runBackend(backend: Backend): Promise<void> {
  const settle = async (what: string) => {
    const note = await backend.settle();
    if (note) {
      notes.push(`${backend.label} ${what}: ${note}; measured anyway.`);
      log(notes.at(-1) ?? '');
    }
  };
  try {
    const index = await backend.open(embedding);
    await loadCranfield(backend, index, corpus);
    await settle('Cranfield');
    for (const mode of MODES) quality.push(await indexQuality(backend.label, index, tenant, corpus, mode));
    log(`quality ${backend.label} done`);
    await index.close();
    ingest.push(...(await otherShapes(backend.label, () => backend.open(embedding), tenant, corpus, INGEST_ROUNDS)));

    const big = await backend.open(embedding);
    let have = 0;
    for (const size of sizes) {
      await grow(big, tenant, corpus, have, size);
      have = size;
      await settle(`${size} chunks`);
      latency.push(...(await timeSearches(backend.label, big, tenant, corpus, size, MODES, LATENCY_QUERIES)));
      log(`latency ${backend.label} ${size} done`);
    }
    await big.close();
  } catch (err) {
    // One backend failing must not lose the others' numbers: it is reported instead.
    notes.push(`${backend.label} FAILED: ${(err as Error).message}`);
    log(notes.at(-1) ?? '');
  } finally {
    await backend.stop();
  }
}

const backends: Array<() => Promise<Backend | undefined>> = [sqliteBackend, postgresBackend, qdrantBackend];
for (const make of backends) {
  const backend = await make();
  if (backend) await runBackend(backend);
}

const queryEmbedMs = await queryEmbeddingTimes(
  embedder,
  corpus.queries.slice(0, LATENCY_QUERIES).map((q) => q.text),
);
await embedder.close();
log('query embedding done');

const sample = corpus.chunks.filter((_, i) => i % Math.floor(corpus.chunks.length / EMBED_SAMPLE) === 0);
const throughput = await measureEmbedding(
  sample.slice(0, EMBED_SAMPLE).map((c) => c.text),
  quick ? 2 : 4,
);
log('embedding throughput done');

const uploads: UploadResult[] = [];
if (!quick) {
  const upload = async (where: Parameters<typeof measureUpload>[1], label: string) => {
    try {
      uploads.push(await measureUpload(corpus, where));
    } catch (err) {
      notes.push(`upload ${label} FAILED: ${(err as Error).message}`);
    }
  };
  await upload({}, 'SQLite');
  const postgresUrl = process.env.DATABASE_URL;
  if (postgresUrl) await upload({ postgresUrl }, 'PostgreSQL');
  if (postgresUrl && qdrantAvailable()) {
    const qdrant = await startQdrant();
    try {
      await upload({ postgresUrl, qdrantUrl: qdrant.url }, 'PostgreSQL + Qdrant');
    } finally {
      await qdrant.stop();
    }
  }
  log('upload done');
}

// The same corpus through the HTTP server's documents and vector-store paths; a 100 MiB file through /z1/files.
const parity = await parityAll(corpus, log);
const bigUpload = await uploadRssAll(log);
notes.push(...parity.notes, ...bigUpload.notes);

// ---- report ----
const pass = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const out: string[] = [];
out.push(`# bench:rag — ${started.toISOString()}${quick ? ' (--quick)' : ''}`);
out.push('');
out.push(
  `Cranfield: ${corpus.docs.length} documents (title + abstract), ${corpus.chunks.length} chunks (pvai's chunker), ` +
    `${corpus.queries.length} queries; nDCG gains 4/3/2/1 for grades 1/2/3/4; a document scores its best chunk.`,
);
out.push('');
out.push('## Quality');
out.push(
  table(
    ['system', 'nDCG@10', 'recall@100'],
    quality.map((q) => [q.system, q.ndcg10.toFixed(3), q.recall100.toFixed(3)]),
  ),
);
out.push('');
out.push('## Quality through HTTP: /z1/rag/search vs /z1/vector_stores/{id}/search (50 chunks asked, hybrid)');
out.push(parityQualityTable(parity.rows));
out.push('');
out.push('## Retrieval latency (one user, k = 10, ms; a cell stops after 20 s once 30 queries are timed)');
out.push(
  table(
    ['backend', 'chunks', 'mode', 'p50', 'p95', 'queries'],
    latency.map((r) => [r.backend, r.chunks, r.mode, r.p50.toFixed(2), r.p95.toFixed(2), r.n]),
  ),
);
out.push(
  `Query embedding (LocalEmbedder, ${THREADS} thread): p50 ${percentile(queryEmbedMs, 0.5).toFixed(1)} ms, ` +
    `p95 ${percentile(queryEmbedMs, 0.95).toFixed(1)} ms, not included above.`,
);
out.push('');
out.push('## Ingestion');
out.push(
  table(
    ['what', 'result'],
    [
      ...ingest.map((r) => [
        `lexical indexing, ${r.backend}, ${r.shape} (chunker + putDocuments, ${r.mb.toFixed(2)} MB${r.rounds.length > 1 ? `, median of ${r.rounds.length} passes` : ''})`,
        `${(r.mb / r.seconds).toFixed(2)} MB/s${r.rounds.length > 1 ? ` (passes ${r.rounds.map((s) => (r.mb / s).toFixed(1)).join(', ')})` : ''}`,
      ]),
      [
        `embedding, node-llama-cpp direct (${throughput.chunks} chunks, ${throughput.tokens} tokens, ${throughput.threads} thread)`,
        `${Math.round(throughput.directTokensPerSecond)} tokens/s`,
      ],
      [
        'embedding, through pvai (LocalEmbedder, batches of 16)',
        `${Math.round(throughput.pvaiTokensPerSecond)} tokens/s`,
      ],
      ...uploads.map((u) => [
        `1 MB upload over HTTP, ${u.backend} (${u.chunkCount} chunks, answered ${u.status})`,
        `${Math.round(u.ms)} ms; planted word found at once: ${u.foundAtOnce ? `yes, hit ${u.rank} of 3` : 'NO'} (search ${Math.round(u.searchMs)} ms)`,
      ]),
      ...parityIngestRows(parity.rows),
      ...uploadRssRows(bigUpload.rows),
    ],
  ),
);
out.push('');
out.push('## Targets');
const peers = quality.filter((q) => !q.system.startsWith('pvai'));
const bestPeer = peers.reduce((a, b) => (b.ndcg10 > a.ndcg10 ? b : a));
const targets: Array<[string, string, string]> = [];
for (const q of quality.filter((r) => r.system.endsWith('hybrid'))) {
  targets.push([
    `${q.system} nDCG@10 ≥ 1.10 × best peer (${bestPeer.system} ${bestPeer.ndcg10.toFixed(3)})`,
    `${(q.ndcg10 / bestPeer.ndcg10).toFixed(3)} ×`,
    pass(q.ndcg10 >= 1.1 * bestPeer.ndcg10),
  ]);
}
const p95At = (backend: string, mode: SearchMode) =>
  latency.find((r) => r.backend === backend && r.chunks === 100_000 && r.mode === mode)?.p95;
for (const [backend, limit] of [
  ['SQLite', 15],
  ['Qdrant', 10],
] as const) {
  const p95 = p95At(backend, 'hybrid');
  if (p95 !== undefined)
    targets.push([`${backend} hybrid p95 at 100k ≤ ${limit} ms`, `${p95.toFixed(2)} ms`, pass(p95 <= limit)]);
}
for (const r of ingest.filter((row) => row.target)) {
  const rate = r.mb / r.seconds;
  targets.push([`lexical indexing ${r.backend}, ${r.shape} ≥ 5 MB/s`, `${rate.toFixed(2)} MB/s`, pass(rate >= 5)]);
}
const ratio = throughput.pvaiTokensPerSecond / throughput.directTokensPerSecond;
targets.push(['embedding via pvai ≥ 0.9 × direct', `${ratio.toFixed(3)} ×`, pass(ratio >= 0.9)]);
for (const u of uploads) {
  targets.push([
    `1 MB upload ${u.backend} ≤ 2 s and lexically searchable at once`,
    `${Math.round(u.ms)} ms, ${u.foundAtOnce ? 'found' : 'not found'}`,
    pass(u.ms <= 2000 && u.foundAtOnce),
  ]);
}
targets.push(...parityTargets(parity.rows), ...uploadRssTargets(bigUpload.rows));
out.push(table(['target', 'measured', ''], targets));
const stolen = steal();
if (notes.length > 0) {
  out.push('');
  out.push('Notes:');
  for (const note of notes) out.push(`- ${note}`);
}
out.push('');
out.push(
  `Machine: ${os.cpus().length} cores, load average at the end ${os.loadavg()[0]?.toFixed(1)}, Node ${process.version}` +
    (stolen === undefined ? '' : `, CPU steal during the run ${(stolen * 100).toFixed(1)} %`) +
    `; ${Math.round((Date.now() - started.getTime()) / 1000)} s.`,
);
console.log(out.join('\n'));
