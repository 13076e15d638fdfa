/**
 * npm run bench:local — the local engine, in three tables, one run:
 *
 * 1. **One stream, in process**: node-llama-cpp driven directly against LocalChatProvider.stream on the same model
 *    (the model in its engine process, its parts relayed), alternating rounds, medians. Target ≥ 0.95×.
 * 2. **Concurrent users, from outside**: 1, 4 and 8 streaming chats at once (a ~300-token prompt, up to 200 tokens
 *    out) through pvai's `/z1/chat/completions` (PV-TURBO on the local engine, memory and usage on, as users run
 *    it) and through llama.cpp's `llama-server` on the same GGUF with the same threads, the same context per
 *    stream and `--parallel` = pvai's sequences. Aggregate output tokens/s, time to first token p50/p95, gap p95.
 *    Targets: tokens/s ≥ 0.9× llama-server's at 4 and 8; TTFT p95 ≤ llama-server's + 15 ms.
 * 3. **Embeddings**: a batch of 32 texts, one request at a time and 4 at once, pvai's `/z1/embeddings` against
 *    `llama-server --embedding` on the MiniLM GGUF.
 *
 * BENCH_THREADS (default 1, the local engine's), BENCH_STREAMS ("1,4,8"), BENCH_OUT_TOKENS (200), BENCH_ROUNDS (3);
 * BENCH_MEMORY=off sends `use_memory: false` (no recall, no fact extraction behind the answers). llama-server is
 * built once by bench/llama-server.ts's recipe; without it, its rows say so and pvai's are still measured.
 */
import { join } from 'node:path';
import { embeddingModelPath } from '../src/setup/index.js';
import { cpuStealMeter, createBenchAccount, freshStorage, ROOT, startBenchServer, table } from './lib.js';
import { findLlamaServer, startLlamaServer } from './llama-server.js';
import { embeddingRows } from './local-embeddings.js';
import { singleStreamRows } from './local-single.js';
import { type LevelResult, runLevel, type StreamTarget } from './local-streams.js';

const DATA_DIR = process.env.PVAI_DATA_DIR || join(ROOT, 'data');
const CHAT_MODEL = process.env.PVAI_LOCAL_MODEL ?? join(DATA_DIR, 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const EMBEDDING_MODEL = embeddingModelPath({ dataDir: DATA_DIR, embeddingModel: undefined });
const THREADS = Number(process.env.BENCH_THREADS ?? 1);
const LEVELS = (process.env.BENCH_STREAMS ?? '1,4,8').split(',').map(Number);
const SEQUENCES = Math.max(...LEVELS);
/** Tokens each stream's sequence holds: the prompt (~300) and the answer (200), with room. */
const CONTEXT_PER_STREAM = 1024;
const OUT_TOKENS = Number(process.env.BENCH_OUT_TOKENS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Memory is on as users run it; off, the rows show the engine without the embedding work memory adds. */
const MEMORY = process.env.BENCH_MEMORY !== 'off';
const PVAI_ROW = MEMORY ? 'pvai (PV-TURBO, local engine)' : 'pvai (PV-TURBO, local engine, memory off)';

const steal = cpuStealMeter();
console.log(`\nbench:local — ${CHAT_MODEL.split('/').pop()}, threads ${THREADS}, ${ROUNDS} rounds\n`);
console.log(table(['path', 'tokens/s', 'ratio', 'first text (ms)'], await singleStreamRows(CHAT_MODEL, THREADS)));

/** Best-of-rounds would flatter both; the median round of each level is reported. */
async function levels(target: StreamTarget): Promise<LevelResult[]> {
  const results: LevelResult[] = [];
  // A warm-up stream: model pages, JIT and the first request's one-time costs are not a user's.
  await runLevel(target, 1, 1000);
  for (const streams of LEVELS) {
    const rounds: LevelResult[] = [];
    for (let round = 0; round < ROUNDS; round++) rounds.push(await runLevel(target, streams, round * 100));
    rounds.sort((a, b) => a.tokensPerSecond - b.tokensPerSecond);
    results.push(rounds[Math.floor(rounds.length / 2)] as LevelResult);
  }
  return results;
}

const storage = await freshStorage();
const pvaiServer = await startBenchServer(
  { ...storage.env, PVAI_LOCAL_MODEL: CHAT_MODEL, PVAI_EMBEDDING_MODEL: EMBEDDING_MODEL },
  {
    localEngine: {
      threads: THREADS,
      sequences: SEQUENCES,
      contextSize: CONTEXT_PER_STREAM,
      maxQueue: 64,
    },
  },
);
let pvai: LevelResult[];
let pvaiEmbeddings: Array<Array<string | number>>;
try {
  const apiKey = await createBenchAccount(pvaiServer.url, 'bench-local@example.com');
  pvai = await levels({
    url: `${pvaiServer.url}/z1/chat/completions`,
    headers: { authorization: `Bearer ${apiKey}` },
    body: {
      model: 'PV-TURBO',
      max_tokens: OUT_TOKENS,
      temperature: 0.7,
      seed: 7,
      user_id: 'bench',
      skip_cache: true,
      ...(MEMORY ? {} : { use_memory: false }),
    },
  });
  pvaiEmbeddings = await embeddingRows('pvai /z1/embeddings', `${pvaiServer.url}/z1/embeddings`, {
    authorization: `Bearer ${apiKey}`,
  });
} finally {
  await pvaiServer.stop();
  await storage.drop();
}

let llama: LevelResult[] | undefined;
let llamaEmbeddings: Array<Array<string | number>> = [];
if (findLlamaServer()) {
  const server = await startLlamaServer(CHAT_MODEL, [
    '-t',
    String(THREADS),
    '-c',
    String(CONTEXT_PER_STREAM * SEQUENCES),
    '--parallel',
    String(SEQUENCES),
  ]);
  try {
    llama = await levels({
      url: `${server.url}/v1/chat/completions`,
      headers: {},
      // pvai's engine samples free text with llama.cpp's repeat penalty 1.1 over the answer's last 64 tokens; the
      // same here, so both servers sample alike.
      body: {
        model: 'local',
        max_tokens: OUT_TOKENS,
        temperature: 0.7,
        seed: 7,
        repeat_penalty: 1.1,
        repeat_last_n: 64,
      },
    });
  } finally {
    await server.stop();
  }
  const embedder = await startLlamaServer(EMBEDDING_MODEL, [
    '-t',
    '1',
    '--embedding',
    '--pooling',
    'mean',
    '-c',
    '16384',
    '-b',
    '16384',
    '-ub',
    '16384',
  ]);
  try {
    llamaEmbeddings = await embeddingRows('llama-server --embedding', `${embedder.url}/v1/embeddings`, {});
  } finally {
    await embedder.stop();
  }
}

const rows = LEVELS.flatMap((streams, i) => {
  const p = pvai[i] as LevelResult;
  const l = llama?.[i];
  const row = (name: string, r: LevelResult, ratio: string) => [
    name,
    streams,
    r.tokensPerSecond,
    ratio,
    r.ttftP50,
    r.ttftP95,
    r.gapP95,
    Math.round(r.meanTokens),
    r.refused,
  ];
  const out = [row(PVAI_ROW, p, l ? (p.tokensPerSecond / l.tokensPerSecond).toFixed(2) : '—')];
  if (l) out.push(row('llama-server', l, '1'));
  return out;
});
console.log(
  `\nConcurrent streaming chats: ~300-token prompt, ≤ ${OUT_TOKENS} tokens out, threads ${THREADS}, ` +
    `${CONTEXT_PER_STREAM} tokens a stream, ${SEQUENCES} sequences / --parallel ${SEQUENCES}` +
    (llama ? '' : ' (llama-server not built: bench/llama-server.ts says how)'),
);
console.log(
  table(
    ['server', 'streams', 'tokens/s', 'vs llama-server', 'TTFT p50', 'TTFT p95', 'gap p95', 'tokens/stream', 'refused'],
    rows,
  ),
);
for (const streams of [4, 8]) {
  const i = LEVELS.indexOf(streams);
  const p = pvai[i];
  const l = llama?.[i];
  if (!p || !l) continue;
  const tps = p.tokensPerSecond / l.tokensPerSecond;
  const ttft = p.ttftP95 - l.ttftP95;
  console.log(
    `${streams} streams: tokens/s ${tps.toFixed(2)}× (target ≥ 0.9: ${tps >= 0.9 ? 'met' : 'not met'}), ` +
      `TTFT p95 ${ttft >= 0 ? '+' : ''}${ttft.toFixed(1)} ms (target ≤ +15: ${ttft <= 15 ? 'met' : 'not met'})`,
  );
}
console.log(`\nEmbeddings: a batch of 32 texts (${EMBEDDING_MODEL.split('/').pop()}), one embedding thread each`);
console.log(
  table(['server', 'batches/s, 1 at a time', 'batches/s, 4 at once'], [...pvaiEmbeddings, ...llamaEmbeddings]),
);
console.log(`\nCPU steal during the run: ${((steal() ?? 0) * 100).toFixed(1)} % (median round shown)`);
