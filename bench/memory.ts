/**
 * npm run bench:memory — persistent memory, end to end over HTTP:
 * - extraction (memory/extraction.ts): the labelled set (memory/turns.jsonl: fact turns across 20 kinds, turns
 *   that state nothing, corrections) said through the API on the embedded default, scored per extractor:
 *   recall, false-memory rate, correction accuracy, extraction time per turn (p50/p95) and turns per second
 *   per core. Extractors: the statement model (default), its words-only head (a server whose embedder is
 *   another model), and SmolLM2 with a grammar-constrained JSON answer (memory.extractionModel routed to the
 *   local model; every 10th case and 20 turns timed: it runs at seconds a turn).
 * - retrieval (memory/retrieval.ts): memories in the prompt across sessions and accounts, and the latency
 *   memory adds at 10,000 memories.
 * - everyday (memory/everyday.ts): the everyday set (memory/everyday.jsonl: plainly stated facts of many kinds,
 *   turns with no lasting fact), its `dev` part and its `held-out` part scored apart, with the stored memories
 *   checked for English that reads wrong after the rewrite to the third person (memory/agreement.ts).
 * Targets: recall ≥ 90 %, ≤ 5 % of no-fact turns stored, ≥ 85 % of corrections supersede, ≥ 50 turns/s per core;
 * on the everyday set's held-out parts recall ≥ 95 %, ≤ 2 % of no-fact turns stored, no memory that reads wrong.
 * `--quick`: every third case and 1,000 memories. `--only=statements|words|smollm2|everyday|retrieval`. `--misses`.
 * `--part=dev|held-out|held-out-2`: one part of the everyday set.
 */
import { join } from 'node:path';
import { StatementExtractor } from '../src/memory/index.js';
import { defaultEmbeddingModelPath } from '../src/retrieval/index.js';
import { ROOT, table } from './lib.js';
import { runEveryday } from './memory/everyday.js';
import { type ExtractionResult, type ExtractorRun, runExtraction } from './memory/extraction.js';
import { labelledTurns } from './memory/labelled.js';
import { runRetrieval } from './memory/retrieval.js';

const QUICK = process.argv.includes('--quick');
const ONLY = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const MISSES = process.argv.includes('--misses');
/** `--part=dev|held-out|held-out-2`: one part of the everyday set. */
const PART = process.argv.find((a) => a.startsWith('--part='))?.slice('--part='.length);
const models = {
  chat: process.env.PVAI_LOCAL_MODEL ?? join(ROOT, 'data', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf'),
  embedding: process.env.PVAI_EMBEDDING_MODEL ?? defaultEmbeddingModelPath(join(ROOT, 'data')),
};

const all = labelledTurns();
const cases = QUICK ? all.filter((_, i) => i % 3 === 0) : all;
const runs: Array<ExtractorRun & { every: number }> = [
  { name: 'statements', every: 1 },
  { name: 'words', every: 1, extractor: () => new StatementExtractor({}) },
  { name: 'smollm2', every: 10, timedTurns: 20, config: { memory: { extractionModel: 'PV-TURBO' } } },
];

const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
console.log(`\nbench:memory — ${new Date().toISOString()}${QUICK ? ' (--quick)' : ''}`);
const results: ExtractionResult[] = [];
for (const run of runs) {
  if (ONLY && ONLY !== run.name) continue;
  const started = performance.now();
  const result = await runExtraction(
    run,
    cases.filter((_, i) => i % run.every === 0),
    models,
  );
  results.push(result);
  console.log(
    `${run.name}: ${result.cases} cases in ${((performance.now() - started) / 1000).toFixed(0)} s; the extractor failed on ${result.failedTurns} timed turns`,
  );
  if (MISSES) console.log(result.misses.map((m) => `  ${m}`).join('\n'));
}
if (results.length > 0) {
  console.log(
    `\nextraction: ${all.length} labelled cases (bench/memory/turns.jsonl), through the API on the embedded default\n`,
  );
  console.log(
    table(
      [
        'extractor',
        'cases',
        'recall',
        'no-fact turns stored',
        'corrections supersede',
        'ms/turn p50 / p95',
        'turns/s per core: extractor / worker',
      ],
      [
        ...results.map((r) => [
          r.name,
          r.cases,
          pct(r.recall),
          pct(r.falseMemoryRate),
          pct(r.correctionRate),
          `${r.p50.toFixed(2)} / ${r.p95.toFixed(2)}`,
          `${r.extractorTurnsPerCpuSecond.toFixed(r.extractorTurnsPerCpuSecond < 10 ? 2 : 0)} / ${r.turnsPerCpuSecond === undefined ? '—' : Math.round(r.turnsPerCpuSecond)}`,
        ]),
        ['target', '', '≥ 90 %', '≤ 5 %', '≥ 85 %', '', '≥ 50'],
      ],
    ),
  );
}
if (!ONLY || ONLY === 'everyday') await runEveryday(models, { quick: QUICK, misses: MISSES, part: PART });
if (!ONLY || ONLY === 'retrieval') await runRetrieval(models.embedding, QUICK);
