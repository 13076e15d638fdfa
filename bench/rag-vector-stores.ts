/**
 * Cranfield through the HTTP server twice, each time into a fresh `pvai serve` (its own process and database, the
 * embedding model configured), so neither path shares term statistics or the ingestion worker with the other:
 *
 * - documents path: every abstract `POST /z1/rag/documents` (a multipart file of one end user), until every
 *   document is `ready`; then each query through `POST /z1/rag/search`;
 * - vector-store path: every abstract `POST /z1/files`, then one vector store and its file batches
 *   (`POST …/file_batches`, at most 500 file ids each: three for the 1,398 non-empty abstracts), polled until `completed`; then
 *   each query through `POST /z1/vector_stores/{id}/search`.
 *
 * The same bytes and file names go in both ways; both searches ask for the same number of chunks (50, the
 * vector-store search's maximum), a document scores its best chunk, and nDCG@10 is computed as bench:rag computes
 * it. Ingestion MB/s is the bytes uploaded ÷ the time from the first upload until the last file is searchable by
 * meaning (embedded), with `UPLOADS` requests in flight on either path.
 *
 * Run alone: `tsx bench/rag-vector-stores.ts` (SQLite; PostgreSQL too with DATABASE_URL, + Qdrant with its binary).
 */
import { performance } from 'node:perf_hooks';
import { ADMIN_TOKEN, type BenchServer, freshStorage, startBenchServer, table } from './lib.js';
import { DATASET_DIR, MODEL_PATH } from './rag/corpus.js';
import { type Cranfield, loadCranfield } from './rag/cranfield.js';
import { documentsOf, ndcgAt } from './rag/metrics.js';
import { qdrantAvailable, startQdrant } from './rag/qdrant-process.js';

/** Chunks asked for per query on both paths: the vector-store search's `max_num_results` maximum. */
export const SEARCH_DEPTH = 50;
/** Uploads in flight at once on either path. */
const UPLOADS = 8;
/** `file_ids` per file batch: the contract's maximum. */
const BATCH = 500;
const USER = 'bench';
const POLL_MS = 250;
const TIMEOUT_MS = 20 * 60_000;

export interface PathResult {
  ndcg10: number;
  /** Per query id: the first 10 distinct Cranfield document ids. */
  top10: Map<string, string[]>;
  mb: number;
  /** Seconds from the first upload until every file or document was searchable by meaning. */
  seconds: number;
  /** Seconds until the last upload had answered. */
  uploadSeconds: number;
  searchMs: number[];
}

export interface ParityRow {
  backend: string;
  documents: PathResult;
  vectorStore: PathResult;
  /** Queries whose 10 first documents are the same, in the same order, on both paths. */
  sameTop10: number;
  queries: number;
  /** Files (documents) ingested on each path. */
  files: number;
}

type Where = { postgresUrl?: string | undefined; qdrantUrl?: string | undefined };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Client {
  constructor(
    readonly url: string,
    readonly key: string,
  ) {}
  async call<T>(method: string, path: string, body?: unknown | FormData): Promise<T> {
    const form = body instanceof FormData;
    const res = await fetch(this.url + path, {
      method,
      headers: {
        Authorization: `Bearer ${this.key}`,
        ...(body && !form ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body === undefined ? {} : { body: form ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }
}

/** `pvai serve` on a fresh database with the embedding model, a business account at generous rate limits. */
export async function benchService(
  where: Where,
  collection: string,
  /** Another build's CLI (as bench:ab's); this tree's build by default. */
  entry?: string,
): Promise<{ server: BenchServer; client: Client; stop(): Promise<void> }> {
  const storage = await freshStorage(where.postgresUrl);
  const server = await startBenchServer(
    {
      ...storage.env,
      PVAI_EMBEDDING_MODEL: MODEL_PATH,
      ...(where.qdrantUrl ? { QDRANT_URL: where.qdrantUrl, QDRANT_COLLECTION: collection } : {}),
    },
    { tiers: { business: { rpm: 1_000_000, rpd: 100_000_000 } } },
    [],
    entry,
  );
  const admin = await fetch(`${server.url}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `${collection}@example.com`, tier: 'business', credits: 1_000_000_000 }),
  });
  const account = (await admin.json()) as { api_key: string };
  if (admin.status !== 201) {
    await server.stop();
    await storage.drop();
    throw new Error(`account: ${admin.status} ${JSON.stringify(account)}`);
  }
  return {
    server,
    client: new Client(server.url, account.api_key),
    async stop() {
      await server.stop();
      await storage.drop();
    },
  };
}

/** Runs `work` over `items` with `limit` in flight. */
async function pool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  });
  await Promise.all(lanes);
  return out;
}

const fileOf = (doc: Cranfield['docs'][number]) => new Blob([doc.text], { type: 'text/plain' });
const nameOf = (id: string) => `cranfield-${id}.txt`;

async function waitUntil(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + TIMEOUT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not done after ${TIMEOUT_MS / 1000} s`);
    await sleep(POLL_MS);
  }
}

async function rank(
  cranfield: Cranfield,
  search: (query: string) => Promise<string[]>,
): Promise<{ ndcg10: number; top10: Map<string, string[]>; searchMs: number[] }> {
  const top10 = new Map<string, string[]>();
  const searchMs: number[] = [];
  let sum = 0;
  let n = 0;
  for (const q of cranfield.queries) {
    const started = performance.now();
    const docIds = await search(q.text);
    searchMs.push(performance.now() - started);
    const ranked = documentsOf(docIds.map((documentId) => ({ documentId })));
    top10.set(q.id, ranked.slice(0, 10));
    const judged = cranfield.qrels.get(q.id);
    if (!judged || judged.size === 0) continue;
    sum += ndcgAt(ranked, judged, 10);
    n++;
  }
  return { ndcg10: n ? sum / n : 0, top10, searchMs };
}

/** The documents with text: Cranfield's 471 and 995 are empty (400 EMPTY_DOCUMENT on either path), so 1,398. */
const withText = (cranfield: Cranfield) => cranfield.docs.filter((d) => d.text.trim() !== '');
const megabytes = (cranfield: Cranfield) =>
  withText(cranfield).reduce((s, d) => s + Buffer.byteLength(d.text), 0) / 1e6;

export async function documentsPath(cranfield: Cranfield, client: Client): Promise<PathResult> {
  const started = performance.now();
  const byDocument = new Map<string, string>();
  await pool(withText(cranfield), UPLOADS, async (doc) => {
    const form = new FormData();
    form.set('user_id', USER);
    form.set('file', fileOf(doc), nameOf(doc.id));
    const created = await client.call<{ id: string }>('POST', '/z1/rag/documents', form);
    byDocument.set(created.id, doc.id);
  });
  const uploadSeconds = (performance.now() - started) / 1000;
  await waitUntil('documents ready', async () => {
    const list = await client.call<{ data: Array<{ id: string; status: string }> }>(
      'GET',
      `/z1/rag/documents?user_id=${USER}`,
    );
    const failed = list.data.find((d) => d.status === 'failed');
    if (failed) throw new Error(`document ${failed.id} failed`);
    return list.data.length === withText(cranfield).length && list.data.every((d) => d.status === 'ready');
  });
  const seconds = (performance.now() - started) / 1000;
  const ranked = await rank(cranfield, async (query) => {
    const res = await client.call<{ data: Array<{ document_id: string }> }>('POST', '/z1/rag/search', {
      user_id: USER,
      query,
      k: SEARCH_DEPTH,
    });
    return res.data.map((hit) => byDocument.get(hit.document_id) ?? hit.document_id);
  });
  return { ...ranked, mb: megabytes(cranfield), seconds, uploadSeconds };
}

interface Batch {
  id: string;
  status: string;
  file_counts: { in_progress: number; completed: number; failed: number; cancelled: number; total: number };
}

export async function vectorStorePath(cranfield: Cranfield, client: Client): Promise<PathResult> {
  const started = performance.now();
  const byFile = new Map<string, string>();
  const fileIds = await pool(withText(cranfield), UPLOADS, async (doc) => {
    const form = new FormData();
    form.set('purpose', 'assistants');
    form.set('file', fileOf(doc), nameOf(doc.id));
    const created = await client.call<{ id: string }>('POST', '/z1/files', form);
    byFile.set(created.id, doc.id);
    return created.id;
  });
  const uploadSeconds = (performance.now() - started) / 1000;
  const store = await client.call<{ id: string }>('POST', '/z1/vector_stores', { name: 'cranfield' });
  const batches: Batch[] = [];
  for (let i = 0; i < fileIds.length; i += BATCH) {
    const ids = fileIds.slice(i, i + BATCH);
    batches.push(await client.call<Batch>('POST', `/z1/vector_stores/${store.id}/file_batches`, { file_ids: ids }));
  }
  await waitUntil('file batches completed', async () => {
    for (const [i, batch] of batches.entries()) {
      if (batch.status === 'completed') continue;
      const now = await client.call<Batch>('GET', `/z1/vector_stores/${store.id}/file_batches/${batch.id}`);
      if (now.status === 'failed' || now.status === 'cancelled' || now.file_counts.failed > 0)
        throw new Error(`batch ${batch.id} ${now.status}: ${JSON.stringify(now.file_counts)}`);
      batches[i] = now;
      if (now.status !== 'completed') return false;
    }
    return true;
  });
  const seconds = (performance.now() - started) / 1000;
  const completed = batches.reduce((s, b) => s + b.file_counts.completed, 0);
  if (completed !== fileIds.length)
    throw new Error(`batches completed with ${completed} of ${fileIds.length} files completed`);
  const ranked = await rank(cranfield, async (query) => {
    const res = await client.call<{ data: Array<{ file_id: string }> }>(
      'POST',
      `/z1/vector_stores/${store.id}/search`,
      { query, max_num_results: SEARCH_DEPTH },
    );
    return res.data.map((hit) => byFile.get(hit.file_id) ?? hit.file_id);
  });
  return { ...ranked, mb: megabytes(cranfield), seconds, uploadSeconds };
}

let services = 0;

/** Both paths on one backend, each in its own fresh server. */
export async function parity(cranfield: Cranfield, where: Where, log: (m: string) => void): Promise<ParityRow> {
  const backend = (where.postgresUrl ? 'PostgreSQL' : 'SQLite') + (where.qdrantUrl ? ' + Qdrant' : '');
  const run = async (path: typeof documentsPath) => {
    const service = await benchService(where, `bench_vs_${process.pid}_${++services}`);
    try {
      return await path(cranfield, service.client);
    } finally {
      await service.stop();
    }
  };
  const documents = await run(documentsPath);
  log(`documents path ${backend}: nDCG@10 ${documents.ndcg10.toFixed(3)}, ${documents.seconds.toFixed(1)} s`);
  const vectorStore = await run(vectorStorePath);
  log(`vector-store path ${backend}: nDCG@10 ${vectorStore.ndcg10.toFixed(3)}, ${vectorStore.seconds.toFixed(1)} s`);
  let sameTop10 = 0;
  for (const [q, top] of documents.top10) if (vectorStore.top10.get(q)?.join() === top.join()) sameTop10++;
  return {
    backend,
    documents,
    vectorStore,
    sameTop10,
    queries: documents.top10.size,
    files: withText(cranfield).length,
  };
}

/** SQLite, then PostgreSQL with DATABASE_URL, then PostgreSQL + Qdrant with the binary too; a failure is a note. */
export async function parityAll(
  cranfield: Cranfield,
  log: (m: string) => void,
): Promise<{ rows: ParityRow[]; notes: string[] }> {
  const rows: ParityRow[] = [];
  const notes: string[] = [];
  const attempt = async (where: Where, label: string) => {
    try {
      rows.push(await parity(cranfield, where, log));
    } catch (err) {
      notes.push(`vector-store parity ${label} FAILED: ${(err as Error).message}`);
      log(notes.at(-1) ?? '');
    }
  };
  await attempt({}, 'SQLite');
  const postgresUrl = process.env.DATABASE_URL;
  if (postgresUrl) await attempt({ postgresUrl }, 'PostgreSQL');
  if (postgresUrl && qdrantAvailable()) {
    const qdrant = await startQdrant();
    try {
      await attempt({ postgresUrl, qdrantUrl: qdrant.url }, 'PostgreSQL + Qdrant');
    } finally {
      await qdrant.stop();
    }
  }
  return { rows, notes };
}

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/** The quality rows: nDCG@10 of both paths, their difference and the queries with the same first ten. */
export function parityQualityTable(rows: ParityRow[]): string {
  return table(
    [
      'backend',
      '/z1/rag/search nDCG@10',
      '/z1/vector_stores/{id}/search nDCG@10',
      'difference',
      'same top 10',
      'search p50 ms (rag / vs)',
    ],
    rows.map((r) => [
      r.backend,
      r.documents.ndcg10.toFixed(3),
      r.vectorStore.ndcg10.toFixed(3),
      (r.vectorStore.ndcg10 - r.documents.ndcg10).toFixed(4),
      `${r.sameTop10} of ${r.queries}`,
      `${p50(r.documents.searchMs).toFixed(1)} / ${p50(r.vectorStore.searchMs).toFixed(1)}`,
    ]),
  );
}

/** The ingestion rows, one per path and backend. */
export function parityIngestRows(rows: ParityRow[]): string[][] {
  return rows.flatMap((r) => [
    [
      `HTTP ingestion, ${r.backend}, documents path (${r.documents.mb.toFixed(2)} MB, ${r.files.toLocaleString('en-US')} POST /z1/rag/documents, ${UPLOADS} in flight, until all ready)`,
      `${(r.documents.mb / r.documents.seconds).toFixed(3)} MB/s (${r.documents.seconds.toFixed(1)} s; uploads answered in ${r.documents.uploadSeconds.toFixed(1)} s)`,
    ],
    [
      `HTTP ingestion, ${r.backend}, vector-store path (${r.files.toLocaleString('en-US')} POST /z1/files, ${UPLOADS} in flight, then file_batches until completed)`,
      `${(r.vectorStore.mb / r.vectorStore.seconds).toFixed(3)} MB/s (${r.vectorStore.seconds.toFixed(1)} s; uploads answered in ${r.vectorStore.uploadSeconds.toFixed(1)} s)`,
    ],
  ]);
}

/** The targets: nDCG@10 equal within ±0.005 per backend. */
export function parityTargets(rows: ParityRow[]): Array<[string, string, string]> {
  return rows.map((r) => {
    const diff = r.vectorStore.ndcg10 - r.documents.ndcg10;
    return [
      `vector-store search nDCG@10 = /z1/rag/search ± 0.005, ${r.backend}`,
      `${r.vectorStore.ndcg10.toFixed(3)} vs ${r.documents.ndcg10.toFixed(3)} (${diff >= 0 ? '+' : ''}${diff.toFixed(4)})`,
      Math.abs(diff) <= 0.005 ? 'PASS' : 'FAIL',
    ];
  });
}

if (process.argv[1]?.endsWith('rag-vector-stores.ts')) {
  const log = (m: string) => process.stderr.write(`[bench:rag-vs] ${m}\n`);
  const { rows, notes } = await parityAll(loadCranfield(DATASET_DIR), log);
  console.log(parityQualityTable(rows));
  console.log();
  console.log(table(['what', 'result'], parityIngestRows(rows)));
  console.log();
  console.log(table(['target', 'measured', ''], parityTargets(rows)));
  for (const note of notes) console.log(`- ${note}`);
}
