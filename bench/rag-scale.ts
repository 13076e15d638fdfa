/**
 * bench:rag-scale — retrieval at a million chunks in one account (issue 59): per backend, the ingestion
 * rate to reach `--size` chunks, hybrid (and lexical, dense) p50/p95, the RSS of the process holding the
 * index and its disk, and hybrid p50/p95 while more chunks are ingested. The corpus is synthetic with
 * Cranfield's statistics (bench/rag/synthetic.ts says how it is made); the queries are Cranfield's with
 * their real MiniLM vectors (cached in data/bench/). Method and results: docs/benchmarks.md.
 *
 *   npm run bench:rag-scale -- [--size 1000000] [--backends sqlite,qdrant,postgres] [--queries 200] [--extra 50000]
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChunkIndex, SearchMode } from '../src/retrieval/index.js';
import { QdrantChunkIndex } from '../src/retrieval/index.js';
import { cpuStealMeter, table } from './lib.js';
import { openSqlIndex } from './rag/backends.js';
import { benchEmbedder, loadCorpus } from './rag/corpus.js';
import { qdrantAvailable, startQdrant, waitIndexed } from './rag/qdrant-process.js';
import { firstSearch, ingest, type Timing, timeModes, timeWhileIngesting } from './rag/scale.js';
import { CHUNKS_PER_DOC, SyntheticCorpus } from './rag/synthetic.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000000' },
    backends: { type: 'string', default: 'sqlite,qdrant' },
    queries: { type: 'string', default: '200' },
    extra: { type: 'string', default: '50000' },
  },
});
const SIZE = Number(values.size);
const QUERIES = Number(values.queries);
const EXTRA = Number(values.extra);
const MODES: SearchMode[] = ['hybrid', 'lexical', 'dense'];

/** VmRSS (or VmHWM, the peak) of a process in MB. */
function rss(pid: number | 'self', field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const du = (dir: string) => Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]) / 1e6;

/** The Qdrant child this process started (its pid and its storage directory). */
function qdrantChild(): { pid: number; storage: string } {
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(/\) \S+ (\d+)/.exec(stat)?.[1]);
      // By the executable, not `comm`: Qdrant names its main thread.
      if (ppid === process.pid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('qdrant')) {
        return {
          pid: Number(name),
          storage: join(
            execFileSync('readlink', [`/proc/${name}/cwd`])
              .toString()
              .trim(),
            'storage',
          ),
        };
      }
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('the Qdrant child process was not found');
}

interface Held {
  index: ChunkIndex;
  /** MB of RSS of the process holding the index, and of disk. */
  rss(): number;
  peak(): number;
  disk(): Promise<number>;
  /** Waits for the steady state (Qdrant's optimiser); a note if it did not come. */
  settle(): Promise<string | undefined>;
  stop(): Promise<void>;
}

async function openBackend(name: string, dimension: number): Promise<Held> {
  const embedding = { id: benchEmbedder().id, dimension };
  if (name === 'sqlite' || name === 'postgres') {
    const { database, db, index } = await openSqlIndex(name, embedding);
    return {
      index,
      rss: () => rss('self'),
      peak: () => rss('self', 'VmHWM'),
      disk: async () =>
        name === 'sqlite'
          ? du(database.dataDir)
          : Number((await db.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b'))[0]?.b) / 1e6,
      settle: async () => undefined,
      async stop() {
        await index.close();
        await db.close();
        await database.drop();
      },
    };
  }
  if (name !== 'qdrant' || !qdrantAvailable()) throw new Error(`no backend ${name} (Qdrant: PVAI_QDRANT_BIN)`);
  const server = await startQdrant();
  const child = qdrantChild();
  const index = new QdrantChunkIndex({ url: server.url, collection: 'scale', timeoutMs: 600_000 });
  await index.prepare(embedding);
  return {
    index,
    rss: () => rss(child.pid),
    peak: () => rss(child.pid, 'VmHWM'),
    disk: async () => du(child.storage),
    settle: () => waitIndexed(server.url, 3_600_000),
    async stop() {
      await index.close();
      await server.stop();
    },
  };
}

interface Result {
  backend: string;
  ingestion: { chunks: number; seconds: number; mb: number };
  settleSeconds: number;
  settleNote: string | undefined;
  firstMs: number;
  timings: Timing[];
  during: { timing: Timing; chunks: number; mbPerSecond: number };
  rssBefore: number;
  rss: number;
  peak: number;
  disk: number;
  steal: number | undefined;
  started: string;
}

async function run(name: string, corpus: Awaited<ReturnType<typeof loadCorpus>>): Promise<Result> {
  const synthetic = new SyntheticCorpus(corpus);
  const dimension = corpus.chunkVectors.values().next().value?.length ?? 384;
  const steal = cpuStealMeter();
  const started = new Date().toISOString();
  const rssBefore = rss('self');
  const held = await openBackend(name, dimension);
  try {
    const docs = Math.ceil(SIZE / CHUNKS_PER_DOC);
    let last = 0;
    const ingestion = await ingest(held.index, synthetic, 0, docs, (done) => {
      if (done - last >= 50_000) {
        last = done;
        process.stderr.write(`\r  ${name}: ${done.toLocaleString('en-US')} chunks`);
      }
    });
    process.stderr.write('\n');
    const settleStart = performance.now();
    const settleNote = await held.settle();
    const settleSeconds = (performance.now() - settleStart) / 1000;
    const firstMs = await firstSearch(held.index, corpus);
    const timings = await timeModes(held.index, corpus, MODES, QUERIES);
    const result = { rss: held.rss(), disk: await held.disk() };
    const during = await timeWhileIngesting(held.index, synthetic, corpus, SIZE, EXTRA);
    return {
      backend: name,
      ingestion,
      settleSeconds,
      settleNote,
      firstMs,
      timings,
      during: {
        timing: during.timing,
        chunks: during.ingested.chunks,
        mbPerSecond: during.ingested.mb / during.ingested.seconds,
      },
      rssBefore: name === 'qdrant' ? 0 : rssBefore,
      ...result,
      peak: held.peak(),
      steal: steal(),
      started,
    };
  } finally {
    await held.stop();
  }
}

const corpus = await loadCorpus(benchEmbedder());
const results: Result[] = [];
for (const name of values.backends.split(',')) {
  process.stderr.write(`${name}: growing to ${SIZE.toLocaleString('en-US')} synthetic chunks\n`);
  const result = await run(name, corpus);
  results.push(result);
  console.error(JSON.stringify(result));
}

const ms = (t: Timing | undefined) => (t ? `${t.p50.toFixed(2)} / ${t.p95.toFixed(2)}` : '');
const by = (r: Result, mode: string) => r.timings.find((t) => t.mode === mode);
const perMillion = 1e6 / SIZE;
console.log(`\nbench:rag-scale at ${SIZE.toLocaleString('en-US')} chunks, ${QUERIES} queries a mode\n`);
console.log(
  table(
    ['row', ...results.map((r) => r.backend)],
    [
      ['hybrid p50 / p95 ms', ...results.map((r) => ms(by(r, 'hybrid')))],
      ['lexical p50 / p95 ms', ...results.map((r) => ms(by(r, 'lexical')))],
      ['dense p50 / p95 ms', ...results.map((r) => ms(by(r, 'dense')))],
      [
        `hybrid p50 / p95 ms while ingesting ${EXTRA.toLocaleString('en-US')} more (searches)`,
        ...results.map((r) => `${ms(r.during.timing)} (${r.during.timing.n})`),
      ],
      [
        'ingestion MB/s of text (chunks/s)',
        ...results.map(
          (r) =>
            `${(r.ingestion.mb / r.ingestion.seconds).toFixed(2)} (${Math.round(r.ingestion.chunks / r.ingestion.seconds).toLocaleString('en-US')})`,
        ),
      ],
      ['ingestion MB/s while searched', ...results.map((r) => r.during.mbPerSecond.toFixed(2))],
      ['text ingested MB, s', ...results.map((r) => `${r.ingestion.mb.toFixed(0)}, ${r.ingestion.seconds.toFixed(0)}`)],
      [
        'until indexed (Qdrant optimiser), s',
        ...results.map((r) => r.settleSeconds.toFixed(0) + (r.settleNote ? ` (${r.settleNote})` : '')),
      ],
      ['first search (embedded: loads the tenant), ms', ...results.map((r) => r.firstMs.toFixed(0))],
      [
        'RSS of the process holding the index, MB (− before; peak)',
        ...results.map((r) => `${r.rss.toFixed(0)} (− ${r.rssBefore.toFixed(0)}; ${r.peak.toFixed(0)})`),
      ],
      ['disk per million chunks, MB', ...results.map((r) => (r.disk * perMillion).toFixed(0))],
      [
        'CPU steal during the run',
        ...results.map((r) => (r.steal === undefined ? '?' : `${(r.steal * 100).toFixed(1)} %`)),
      ],
      ['started (UTC)', ...results.map((r) => r.started.slice(0, 16))],
    ],
  ),
);
process.exit(0);
