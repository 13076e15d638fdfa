/**
 * npm run bench:embeddings — POST /z1/embeddings end to end against node-llama-cpp driven directly.
 *
 * The server is the production artifact (`pvai serve` from tsc's output, its own process, SQLite, the set-up's
 * all-MiniLM-L6-v2 on its one embedding thread). The direct side is node-llama-cpp in this process with the same
 * model file and 1 thread, embedding the same texts one by one (`getEmbeddingFor`, which tokenizes them), while
 * the server is idle; the two alternate by round (the order flips each round), so both see the same machine.
 *
 * - **ratio**: texts/s through HTTP (one request of 32 texts at a time on one kept-alive connection: JSON in,
 *   authentication, the rate limiter, validation, pvai's token count, the credit charge, the model, JSON or
 *   base64 out, the usage row) ÷ texts/s of node-llama-cpp directly on the same texts. Target ≥ 0.9.
 *   For short texts (sentences, ~15 tokens) and chunk-sized ones (~180 tokens, what RAG embeds).
 * - **requests/s** for a batch of 32 short texts: the same sequential client, and 4 connections at once (after
 *   a warm-up, for BENCH_SECONDS, default 10); one embedding thread serves them all, so more add no speed.
 * Medians of BENCH_ROUNDS rounds (default 5). Prints a markdown table.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { getSharedLlama } from '../src/providers/index.js';
import { embeddingModelPath } from '../src/setup/index.js';
import { cpuStealMeter, createBenchAccount, freshStorage, median, ROOT, startBenchServer, table } from './lib.js';

const MODEL =
  process.env.BENCH_EMBEDDING_MODEL ??
  embeddingModelPath({
    dataDir: process.env.PVAI_DATA_DIR || join(ROOT, 'data'),
    embeddingModel: process.env.PVAI_EMBEDDING_MODEL || undefined,
  });
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCH = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

/** A deterministic stream of numbers in [0, 1) (mulberry32), so every run embeds the same texts. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUBJECTS = ['The harbour master', 'A tired engineer', 'Our new supplier', 'The city council', 'My neighbour'];
const VERBS = ['reported', 'questioned', 'approved', 'delayed', 'described', 'measured', 'repaired'];
const OBJECTS = [
  'the quarterly revenue figures',
  'a cracked turbine blade',
  'the ferry timetable for the winter',
  'three invoices from the bakery',
  'the pressure readings of the boundary layer',
  'a rental contract for the old mill',
];
const ENDINGS = ['before noon.', 'after a long meeting.', 'in the annual report.', 'without any comment.', 'twice.'];

function sentence(next: () => number): string {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)] as T;
  return `${pick(SUBJECTS)} ${pick(VERBS)} ${pick(OBJECTS)} ${pick(ENDINGS)}`;
}

/** 256 short texts (a sentence, ~15 tokens) and 256 chunk-sized ones (~720 characters, ~180 tokens). */
function inputs(): { short: string[]; chunks: string[] } {
  const next = random(26);
  const short = Array.from({ length: 256 }, (_, i) => `${sentence(next)} (${i})`);
  const chunks = Array.from({ length: 256 }, () => {
    let text = '';
    while (text.length < 720) text += `${sentence(next)} `;
    return text.trim();
  });
  return { short, chunks };
}

const storage = await freshStorage();
const server = await startBenchServer(
  { ...storage.env, PVAI_EMBEDDING_MODEL: MODEL },
  { tiers: { enterprise: { rpm: 1_000_000, rpd: 100_000_000, monthly: 1_000_000_000 } } },
);
const llama = await getSharedLlama();
const model = await llama.loadModel({ modelPath: MODEL });
const context = await model.createEmbeddingContext({ threads: 1 });
const dispatcher = new Agent({ connections: 1 });
const stolen = cpuStealMeter();
try {
  const key = await createBenchAccount(server.url, 'bench-embeddings@example.com');
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const { short, chunks } = inputs();
  const tokens = (texts: string[]) => texts.reduce((sum, t) => sum + model.tokenize(t).length, 0);

  async function viaHttp(texts: string[], format: 'float' | 'base64'): Promise<number> {
    const started = performance.now();
    for (let i = 0; i < texts.length; i += BATCH) {
      const body = JSON.stringify({ model: 'PV-EMBED', input: texts.slice(i, i + BATCH), encoding_format: format });
      const res = await request(`${server.url}/z1/embeddings`, { method: 'POST', headers, body, dispatcher });
      const answer = (await res.body.json()) as { data?: unknown[] };
      if (res.statusCode !== 200 || answer.data?.length !== Math.min(BATCH, texts.length - i)) {
        throw new Error(`POST /z1/embeddings answered ${res.statusCode}: ${JSON.stringify(answer).slice(0, 300)}`);
      }
    }
    return texts.length / ((performance.now() - started) / 1000);
  }

  /**
   * `connections` clients each sending the same batch again as soon as its answer is in, for BENCH_SECONDS after
   * 3 s of the same unmeasured: requests answered per second (counted exactly, not in 1-s buckets).
   */
  async function atOnce(connections: number, texts: string[]): Promise<{ rps: number; p50: number }> {
    const body = JSON.stringify({ model: 'PV-EMBED', input: texts });
    const pool = new Agent({ connections });
    const latencies: number[] = [];
    const run = async (until: number, measured: boolean) => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await request(`${server.url}/z1/embeddings`, { method: 'POST', headers, body, dispatcher: pool });
        await res.body.arrayBuffer();
        if (res.statusCode !== 200) throw new Error(`POST /z1/embeddings answered ${res.statusCode} under load`);
        if (measured) latencies.push(performance.now() - started);
      }
    };
    try {
      const warm = performance.now() + 3000;
      await Promise.all(Array.from({ length: connections }, () => run(warm, false)));
      const started = performance.now();
      await Promise.all(Array.from({ length: connections }, () => run(started + SECONDS * 1000, true)));
      return { rps: latencies.length / ((performance.now() - started) / 1000), p50: median(latencies) };
    } finally {
      await pool.close();
    }
  }

  async function direct(texts: string[]): Promise<number> {
    const started = performance.now();
    for (const text of texts) await context.getEmbeddingFor(text);
    return texts.length / ((performance.now() - started) / 1000);
  }

  // Warm both sides (the server loaded the model at start; the first requests warm its JIT).
  await viaHttp(short.slice(0, 64), 'float');
  await direct(short.slice(0, 64));

  const rows: Array<Array<string | number>> = [];
  for (const [name, texts] of [
    ['short texts', short],
    ['chunk-sized texts', chunks],
  ] as const) {
    const perText = tokens(texts) / texts.length;
    const results = { direct: [] as number[], float: [] as number[], base64: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const steps: Array<() => Promise<void>> = [
        async () => void results.direct.push(await direct(texts)),
        async () => void results.float.push(await viaHttp(texts, 'float')),
        async () => void results.base64.push(await viaHttp(texts, 'base64')),
      ];
      for (const step of round % 2 === 0 ? steps : steps.reverse()) await step();
    }
    const base = median(results.direct);
    rows.push([`${name} (${perText.toFixed(0)} tokens each): node-llama-cpp directly`, base, 1, base / BATCH]);
    for (const format of ['float', 'base64'] as const) {
      const rate = median(results[format]);
      rows.push([`${name}: POST /z1/embeddings, batches of ${BATCH}, ${format}`, rate, rate / base, rate / BATCH]);
    }
  }

  const concurrent = await atOnce(4, short.slice(0, BATCH));
  rows.push([
    `short texts: 4 connections at once, batches of ${BATCH}, float`,
    concurrent.rps * BATCH,
    '—',
    concurrent.rps,
  ]);

  const steal = stolen();
  console.log(
    `\nEmbeddings: pvai's HTTP endpoint against node-llama-cpp directly (${MODEL.split('/').pop()}, 1 thread each), ` +
      `median of ${ROUNDS} alternating rounds; CPU steal ${steal === undefined ? 'n/a' : `${(steal * 100).toFixed(1)} %`}\n`,
  );
  console.log(table(['path', 'texts/s', 'ratio (target ≥ 0.9)', 'requests/s'], rows));
  console.log(`\n4 connections at once: p50 ${concurrent.p50.toFixed(0)} ms per request of ${BATCH} texts`);
} finally {
  await dispatcher.close();
  await context.dispose();
  await model.dispose();
  await server.stop();
  await storage.drop();
}
