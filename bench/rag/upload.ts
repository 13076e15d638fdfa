/**
 * A 1 MB plain-text file uploaded through the real HTTP server (`pvai serve` from dist/, its own process,
 * a fresh database, the embedding model configured): the time to the 201 answer, then at once a search for
 * a word planted near the end of the file, which must come back among the 3 hits. (Not necessarily first:
 * the hybrid search fuses its lexical first place with the dense first place of a chunk embedded already,
 * an RRF tie that Qdrant breaks either way.) The upload answers after
 * at most DocumentService's ready wait (1.5 s, its `readyWaitMs` option) of waiting for its own document; embedding 1 MB goes on in the background,
 * so the answer is `processing` and the search can only have found the word lexically.
 */
import { performance } from 'node:perf_hooks';
import { ADMIN_TOKEN, freshStorage, startBenchServer } from '../lib.js';
import type { Corpus } from './corpus.js';
import { MODEL_PATH } from './corpus.js';

export const PLANTED = 'quixotically-zeppelined';

export interface UploadResult {
  backend: string;
  bytes: number;
  ms: number;
  status: string;
  chunkCount: number;
  foundAtOnce: boolean;
  /** The planted chunk's place among the search's 3 hits (1 is first), 0 when absent. */
  rank: number;
  searchMs: number;
}

/** About `bytes` of Cranfield text (UTF-8, ASCII), the planted word in a sentence 95 % of the way in. */
export function megabyteText(corpus: Corpus, bytes = 1_000_000): string {
  const parts: string[] = [];
  let size = 0;
  let planted = false;
  for (let i = 0; size < bytes; i++) {
    const doc = corpus.docs[i % corpus.docs.length];
    if (!doc) break;
    if (!planted && size > bytes * 0.95) {
      parts.push(`The test engineer wrote that the wing flutter was ${PLANTED} at high speed.`);
      planted = true;
    }
    parts.push(doc.text);
    size += doc.text.length + 2;
  }
  return parts.join('\n\n').slice(0, bytes);
}

export async function measureUpload(
  corpus: Corpus,
  where: { postgresUrl?: string | undefined; qdrantUrl?: string | undefined } = {},
): Promise<UploadResult> {
  const storage = await freshStorage(where.postgresUrl);
  const server = await startBenchServer(
    {
      ...storage.env,
      PVAI_EMBEDDING_MODEL: MODEL_PATH,
      ...(where.qdrantUrl ? { QDRANT_URL: where.qdrantUrl, QDRANT_COLLECTION: 'bench_upload' } : {}),
    },
    { tiers: { business: { rpm: 100_000 } } },
  );
  try {
    const admin = await fetch(`${server.url}/admin/accounts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.com', tier: 'business', credits: 1000 }),
    });
    const account = (await admin.json()) as { api_key: string };
    if (admin.status !== 201) throw new Error(`account: ${admin.status} ${JSON.stringify(account)}`);
    const auth = { Authorization: `Bearer ${account.api_key}` };
    const text = megabyteText(corpus);
    const form = new FormData();
    form.set('user_id', 'bench');
    form.set('file', new Blob([text], { type: 'text/plain' }), 'cranfield-1mb.txt');
    const started = performance.now();
    const res = await fetch(`${server.url}/z1/rag/documents`, { method: 'POST', headers: auth, body: form });
    const doc = (await res.json()) as { status: string; chunk_count: number };
    const ms = performance.now() - started;
    if (res.status !== 201) throw new Error(`upload: ${res.status} ${JSON.stringify(doc)}`);
    const searchStarted = performance.now();
    const search = await fetch(`${server.url}/z1/rag/search`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ user_id: 'bench', query: PLANTED.replace('-', ' '), k: 3 }),
    });
    const found = (await search.json()) as { data?: Array<{ snippet: string }> };
    const searchMs = performance.now() - searchStarted;
    return {
      backend: (where.postgresUrl ? 'PostgreSQL' : 'SQLite') + (where.qdrantUrl ? ' + Qdrant' : ''),
      bytes: Buffer.byteLength(text),
      ms,
      status: doc.status,
      chunkCount: doc.chunk_count,
      foundAtOnce: found.data?.some((hit) => hit.snippet.includes(PLANTED)) ?? false,
      rank: (found.data?.findIndex((hit) => hit.snippet.includes(PLANTED)) ?? -1) + 1,
      searchMs,
    };
  } finally {
    await server.stop();
    await storage.drop();
  }
}
