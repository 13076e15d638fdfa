/**
 * Throwaway measurement behind the embedded vector index choice (docs/decisions.md): dense top-10 over
 * one user's N unit vectors (384 dims, MiniLM's), several ways, p50/p95 latency and recall@10 against
 * the exact scan. Random vectors are the hard case for quantisation (no clusters), so recall here is
 * a floor. Optional engines load when installed: `npm i --no-save sqlite-vec usearch`.
 *
 *   tsx bench/vector-index.ts [N ...]          (default 1000 10000 100000)
 *   tsx bench/vector-index.ts --index [N ...]  through SqlChunkIndex on SQLite (what ships)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { rerank, SqlChunkIndex, VectorSet } from '../src/retrieval/index.js';
import { openDb } from '../src/storage/index.js';

const DIM = 384;
const K = 10;
const QUERIES = 200;

function gaussian(rand: () => number): number {
  return Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
}

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / n;
  return v;
}

function randomUnit(rand: () => number): Float32Array {
  const v = new Float32Array(DIM);
  for (let i = 0; i < DIM; i++) v[i] = gaussian(rand);
  return unit(v);
}

/** A query near a stored vector (cosine ~0.8), as a question is near its passage; or a random one. */
function queryNear(base: Float32Array, rand: () => number): Float32Array {
  const noise = randomUnit(rand);
  const q = new Float32Array(DIM);
  for (let i = 0; i < DIM; i++) q[i] = 0.8 * (base[i] ?? 0) + 0.6 * (noise[i] ?? 0);
  return unit(q);
}

function exactTop(data: Float32Array[], q: Float32Array, k: number): number[] {
  const best: Array<[number, number]> = [];
  data.forEach((v, i) => {
    let s = 0;
    for (let d = 0; d < DIM; d++) s += (v[d] as number) * (q[d] as number);
    if (best.length < k || s > (best[k - 1] as [number, number])[0]) {
      best.push([s, i]);
      best.sort((a, b) => b[0] - a[0]);
      if (best.length > k) best.pop();
    }
  });
  return best.map((x) => x[1]);
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
}

interface Engine {
  name: string;
  search(q: Float32Array): number[] | Promise<number[]>;
  /** Measured on fewer queries (an engine taking ~1 s a query at 100k). */
  queries?: number;
}

async function measure(engine: Engine, all: Float32Array[], truth: number[][]) {
  const queries = all.slice(0, engine.queries ?? all.length);
  for (const q of queries.slice(0, 10)) await engine.search(q); // warm up
  const times: number[] = [];
  let hits = 0;
  for (const [i, q] of queries.entries()) {
    const t = performance.now();
    const got = await engine.search(q);
    times.push(performance.now() - t);
    const want = new Set(truth[i]);
    hits += got.slice(0, K).filter((x) => want.has(x)).length;
  }
  return { p50: pct(times, 50), p95: pct(times, 95), recall: hits / (K * queries.length) };
}

/** An engine installed here, or in BENCH_MODULES (a node_modules folder outside the project). */
async function optional(name: string): Promise<unknown> {
  try {
    return await import(name);
  } catch {
    const dir = process.env.BENCH_MODULES;
    if (!dir) return undefined;
    try {
      return createRequire(join(dir, 'bench.cjs'))(name);
    } catch {
      return undefined;
    }
  }
}

async function main() {
  const sizes = process.argv.slice(2).map(Number);
  const rows: string[] = [];
  for (const n of sizes.length ? sizes : [1000, 10_000, 100_000]) {
    const rand = mulberry32(n);
    const data = Array.from({ length: n }, () => randomUnit(rand));
    const queries = Array.from({ length: QUERIES }, (_, i) =>
      i % 2 === 0 ? queryNear(data[Math.floor(rand() * n)] as Float32Array, rand) : randomUnit(rand),
    );
    const truth = queries.map((q) => exactTop(data, q, K));
    const engines: Engine[] = [];
    const dir = mkdtempSync(join(tmpdir(), 'pvai-vecbench-'));
    const db = new Database(join(dir, 'v.db'));
    db.pragma('journal_mode = WAL');

    // Today's path: every vector of the user read from SQLite per query, dot products in JS.
    db.exec('CREATE TABLE v (id INTEGER PRIMARY KEY, u TEXT, e BLOB); CREATE INDEX v_u ON v (u)');
    const ins = db.prepare('INSERT INTO v (id, u, e) VALUES (?, ?, ?)');
    db.transaction(() => {
      data.forEach((v, i) => {
        ins.run(i, 'user', Buffer.from(v.buffer));
      });
      // Another tenant's rows, so the filter is real.
      for (let i = 0; i < 1000; i++) ins.run(n + i, 'other', Buffer.from(randomUnit(rand).buffer));
    })();
    const scan = db.prepare('SELECT id, e FROM v WHERE u = ?');
    engines.push({
      name: 'SQLite rows + JS dot (before)',
      queries: n > 20_000 ? 20 : QUERIES,
      search(q) {
        const out = (scan.all('user') as Array<{ id: number; e: Buffer }>).map((r) => {
          const v = new Float32Array(new Uint8Array(r.e).buffer);
          let s = 0;
          for (let d = 0; d < DIM; d++) s += (v[d] ?? 0) * (q[d] ?? 0);
          return [s, r.id] as const;
        });
        out.sort((a, b) => b[0] - a[0]);
        return out.slice(0, K).map((x) => x[1]);
      },
    });

    // In process, exact: one contiguous float32 array per user, scanned in JS.
    const flat = new Float32Array(n * DIM);
    data.forEach((v, i) => {
      flat.set(v, i * DIM);
    });
    engines.push({
      name: 'memory f32 exact (JS)',
      search(q) {
        const best: Array<[number, number]> = [];
        for (let i = 0, o = 0; i < n; i++, o += DIM) {
          let s = 0;
          for (let d = 0; d < DIM; d++) s += (flat[o + d] as number) * (q[d] as number);
          if (best.length < K || s > (best[K - 1] as [number, number])[0]) {
            best.push([s, i]);
            best.sort((a, b) => b[0] - a[0]);
            if (best.length > K) best.pop();
          }
        }
        return best.map((x) => x[1]);
      },
    });
    // In process, what src/retrieval/sql/vector-set.ts holds: int8 rows scanned with wasm SIMD, the best reranked
    // exactly (SqlChunkIndex reads those float32 vectors back from the database: see --index).
    const set = new VectorSet(DIM);
    data.forEach((v, i) => {
      set.upsert(String(i), 'doc', v);
    });
    for (const count of [50, 100, 200]) {
      engines.push({
        name: `memory int8 (wasm SIMD) + f32 rerank ${count}`,
        search: (q) => rerank(q, set.candidates(q, count), (id) => data[Number(id)], K).map((h) => Number(h.id)),
      });
    }
    {
      const t = performance.now();
      const loaded = new VectorSet(DIM);
      for (const r of scan.iterate('user') as Iterable<{ id: number; e: Buffer }>) {
        loaded.upsert(String(r.id), 'doc', new Float32Array(new Uint8Array(r.e).buffer));
      }
      rows.push(`| ${n} | (load the user's set from SQLite) | ${(performance.now() - t).toFixed(1)} ms | | |`);
    }

    const skip = (process.env.BENCH_SKIP ?? '').split(',');
    const vec = (skip.includes('sqlite-vec') ? undefined : await optional('sqlite-vec')) as
      | { load(db: unknown): void }
      | undefined;
    if (vec) {
      vec.load(db);
      db.exec(`CREATE VIRTUAL TABLE vf USING vec0(u TEXT PARTITION KEY, e float[${DIM}] distance_metric=cosine)`);
      db.exec(`CREATE VIRTUAL TABLE vb USING vec0(u TEXT PARTITION KEY, e bit[${DIM}])`);
      const insF = db.prepare('INSERT INTO vf (rowid, u, e) VALUES (?, ?, ?)');
      const insB = db.prepare('INSERT INTO vb (rowid, u, e) VALUES (?, ?, vec_quantize_binary(?))');
      db.transaction(() => {
        data.forEach((v, i) => {
          insF.run(BigInt(i), 'user', Buffer.from(v.buffer));
          insB.run(BigInt(i), 'user', Buffer.from(v.buffer));
        });
      })();
      const knnF = db.prepare(
        `SELECT rowid AS id FROM vf WHERE e MATCH ? AND u = 'user' AND k = ${K} ORDER BY distance`,
      );
      engines.push({
        name: 'sqlite-vec vec0 f32 (partition)',
        search: (q) => (knnF.all(Buffer.from(q.buffer)) as Array<{ id: number }>).map((r) => Number(r.id)),
      });
      const knnB = db.prepare(
        `WITH c AS (SELECT rowid AS id FROM vb WHERE e MATCH vec_quantize_binary(?) AND u = 'user' AND k = 200)
         SELECT c.id AS id FROM c JOIN v ON v.id = c.id ORDER BY vec_distance_cosine(v.e, ?) LIMIT ${K}`,
      );
      engines.push({
        name: 'sqlite-vec vec0 bit + f32 rerank 200',
        search: (q) =>
          (knnB.all(Buffer.from(q.buffer), Buffer.from(q.buffer)) as Array<{ id: number }>).map((r) => Number(r.id)),
      });
    }

    // Its build takes minutes at 100k on 2 cores: BENCH_SKIP=usearch leaves it out.
    const usearch = (skip.includes('usearch') ? undefined : await optional('usearch')) as
      | {
          Index: new (
            o: Record<string, unknown>,
          ) => {
            add(keys: BigUint64Array, v: Float32Array): void;
            search(q: Float32Array, k: number, threads: number): { keys: BigUint64Array };
          };
        }
      | undefined;
    if (usearch) {
      const t = performance.now();
      const index = new usearch.Index({ dimensions: DIM, metric: 'cos', quantization: 'f32', connectivity: 16 });
      const flat = new Float32Array(n * DIM);
      data.forEach((v, i) => {
        flat.set(v, i * DIM);
      });
      index.add(BigUint64Array.from(data.map((_, i) => BigInt(i))), flat);
      rows.push(`| ${n} | (usearch HNSW build) | ${(performance.now() - t).toFixed(0)} ms | | |`);
      engines.push({
        name: 'usearch HNSW f32 (M=16)',
        search: (q) => [...index.search(q, K, 1).keys].map(Number),
      });
    }

    for (const engine of engines) {
      const r = await measure(engine, queries, truth);
      rows.push(`| ${n} | ${engine.name} | ${r.p50.toFixed(2)} ms | ${r.p95.toFixed(2)} ms | ${r.recall.toFixed(3)} |`);
      console.error(rows.at(-1));
    }
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log('| chunks | method | p50 | p95 | recall@10 |\n| --- | --- | --- | --- | --- |');
  console.log(rows.join('\n'));
}

/** The shipped path: SqlChunkIndex on a SQLite file, one user's N chunks among another user's. */
async function throughIndex() {
  const sizes = process.argv.slice(3).map(Number);
  console.log('| chunks | SqlChunkIndex (SQLite) | p50 | p95 | |\n| --- | --- | --- | --- | --- |');
  for (const n of sizes.length ? sizes : [1000, 10_000, 100_000]) {
    const dir = mkdtempSync(join(tmpdir(), 'pvai-vecbench-'));
    const db = await openDb({ dataDir: dir });
    const index = new SqlChunkIndex(db);
    await index.prepare({ id: 'bench', dimension: DIM });
    const rand = mulberry32(n);
    // A skewed 20,000-word vocabulary (a few common words, a long tail), as prose has.
    const word = () => `w${Math.floor(20_000 * rand() ** 3)}`;
    const tenant = { accountId: 'acct', userId: 'user' };
    const data: Float32Array[] = [];
    let t = performance.now();
    for (let d = 0; d * 100 < n; d++) {
      const chunks = Array.from({ length: Math.min(100, n - d * 100) }, (_, i) => {
        const text = Array.from({ length: 120 }, word).join(' ');
        return { id: `d${d}_c${i}`, documentId: `d${d}`, ordinal: i, text, charStart: 0, charEnd: 0, page: null };
      });
      await index.putChunks(tenant, `d${d}`, chunks);
      const vectors = chunks.map((c) => {
        const vector = randomUnit(rand);
        data.push(vector);
        return { chunkId: c.id, vector };
      });
      await index.putVectors(tenant, `d${d}`, vectors);
    }
    const put = performance.now() - t;
    const queries = Array.from({ length: QUERIES }, () =>
      queryNear(data[Math.floor(rand() * n)] as Float32Array, rand),
    );
    const fresh = new SqlChunkIndex(db);
    t = performance.now();
    await fresh.search(tenant, { text: '', vector: queries[0], k: K, mode: 'dense' });
    const load = performance.now() - t;
    console.log(
      `| ${n} | put chunks + vectors (${(put / 1000).toFixed(1)} s); first search loads | ${load.toFixed(0)} ms | | |`,
    );
    for (const mode of ['dense', 'lexical', 'hybrid'] as const) {
      const times: number[] = [];
      for (const [i, q] of queries.entries()) {
        const text = `${word()} ${word()} ${word()} ${i}`;
        const t0 = performance.now();
        await fresh.search(tenant, { text, vector: q, k: K, mode });
        times.push(performance.now() - t0);
      }
      console.log(`| ${n} | ${mode} | ${pct(times, 50).toFixed(2)} ms | ${pct(times, 95).toFixed(2)} ms | |`);
    }
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await (process.argv[2] === '--index' ? throughIndex() : main());
