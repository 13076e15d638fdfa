/**
 * bench:memory's extraction half: the labelled set (labelled.ts) said through the API, one fresh end user
 * per case, on the embedded default (SQLite, MiniLM, SmolLM2 answering locally, no upstream); after each
 * case the user's memories are read with GET /z1/memory and their histories, and scored. Then the extractor
 * alone: time per turn (p50/p95) and turns per second per core (CPU time, all threads, over the set); and
 * the worker's whole path per core (every turn queued, then the queue drained).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig, type RawConfig } from '../../src/config/index.js';
import type { FactExtractor, MemoryService } from '../../src/memory/index.js';
import { startServer } from '../../src/server.js';
import { ADMIN_TOKEN } from '../lib.js';
import { kindOf, type LabelledTurn, type StoredMemory, score, type TurnScore } from './labelled.js';

export interface ExtractorRun {
  name: string;
  /** Server settings beyond the embedded default (an extraction model). */
  config?: RawConfig;
  /** An extractor given to the server instead of its configured one (the words-only head). */
  extractor?: (embedder: unknown) => FactExtractor;
  /** Turns timed at most (a model that takes seconds a turn). */
  timedTurns?: number;
}

export interface ExtractionResult {
  name: string;
  cases: number;
  recall: number;
  falseMemoryRate: number;
  correctionRate: number;
  p50: number;
  p95: number;
  /** Turns the extractor failed on, of those timed (a model's answer that does not fit the schema). */
  failedTurns: string;
  /** The extractor alone, over the process's CPU time. */
  extractorTurnsPerCpuSecond: number;
  /** The worker's whole path (claim, extract, reconcile, delete), over the process's CPU time; not run for a slow model. */
  turnsPerCpuSecond: number | undefined;
  misses: string[];
  /** Every memory the cases left, as stored (the agreement check reads them). */
  stored: string[];
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? Number.NaN;

export async function runExtraction(
  run: ExtractorRun,
  cases: readonly LabelledTurn[],
  models: { chat: string; embedding: string },
): Promise<ExtractionResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-bench-extraction-'));
  const config = loadConfig(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      adminToken: ADMIN_TOKEN,
      logLevel: 'silent',
      localModel: models.chat,
      embeddingModel: models.embedding,
      tiers: { free: { rpm: 1_000_000, rpd: 1_000_000, monthly: 10_000_000 } },
      ...run.config,
    },
  );
  const server = await startServer(config, {
    logger: pino({ level: 'silent' }),
    ...(run.extractor ? { memoryExtractor: run.extractor(undefined) } : {}),
  });
  const call = async <T>(method: string, path: string, key: string, body?: unknown): Promise<T> => {
    const res = await fetch(server.url + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  try {
    const { api_key: key } = await call<{ api_key: string }>('POST', '/admin/accounts', ADMIN_TOKEN, {
      email: `${run.name.replace(/\W/g, '')}@bench.example`,
      tier: 'free',
      credits: 10_000_000,
    });
    const say = (user: string, text: string) =>
      call('POST', '/z1/chat/completions', key, {
        model: 'PV-TURBO',
        user_id: user,
        max_tokens: 1,
        temperature: 0,
        skip_cache: true,
        messages: [{ role: 'user', content: text }],
      });
    const memoriesOf = async (user: string): Promise<StoredMemory[]> => {
      const list = await call<{ data: Array<{ id: string; content: string }> }>(
        'GET',
        `/z1/memory?user_id=${user}`,
        key,
      );
      return Promise.all(
        list.data.map(async (m) => {
          const history = await call<{ data: Array<{ content: string; previous_content: string | null }> }>(
            'GET',
            `/z1/memory/${m.id}/history?user_id=${user}`,
            key,
          );
          return { ...m, history: history.data.flatMap((h) => [h.content, h.previous_content ?? '']) };
        }),
      );
    };
    const scores: Array<{ turn: LabelledTurn; score: TurnScore; memories: StoredMemory[] }> = [];
    for (const [i, turn] of cases.entries()) {
      const user = `u${i}-${turn.id}`;
      for (const before of turn.before ?? []) {
        await say(user, before);
        await server.runtime.memory.settled();
      }
      await say(user, turn.say);
      await server.runtime.memory.settled();
      const memories = await memoriesOf(user);
      scores.push({ turn, score: score(turn, memories), memories });
    }
    const of = (kind: string) => scores.filter((s) => kindOf(s.turn) === kind);
    const facts = of('fact');
    const misses = scores
      .filter(
        ({ turn, score: s }) =>
          s.falseMemory ||
          (kindOf(turn) === 'fact' && s.kept < s.facts) ||
          (kindOf(turn) === 'correction' && !s.corrected),
      )
      .map(({ turn, memories }) => `${turn.id} "${turn.say}" → [${memories.map((m) => m.content).join(' | ')}]`);
    const timing = await timeExtraction(
      server.runtime.memory,
      cases,
      key,
      run.timedTurns ?? Number.POSITIVE_INFINITY,
      run.timedTurns === undefined,
    );
    return {
      name: run.name,
      cases: cases.length,
      recall:
        facts.reduce((n, s) => n + s.score.kept, 0) /
        Math.max(
          1,
          facts.reduce((n, s) => n + s.score.facts, 0),
        ),
      falseMemoryRate: of('none').filter((s) => s.score.falseMemory).length / Math.max(1, of('none').length),
      correctionRate: of('correction').filter((s) => s.score.corrected).length / Math.max(1, of('correction').length),
      ...timing,
      misses,
      stored: scores.flatMap((s) => s.memories.map((m) => m.content)),
    };
  } finally {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Time per turn: the extractor alone over every turn of the set, one at a time (wall time, the first look
 * included). Throughput: every turn queued for a user of its own, then the worker's whole path (claim,
 * extract, reconcile into the memories, delete the job) until the queue is empty, over the process's CPU
 * time (all threads: the embedding runs on llama.cpp's).
 */
async function timeExtraction(
  memory: MemoryService,
  cases: readonly LabelledTurn[],
  key: string,
  most: number,
  pipeline: boolean,
) {
  const { extractor } = memory;
  const turns = cases.flatMap((c) => [...(c.before ?? []), c.say]).slice(0, most);
  const signal = new AbortController().signal;
  for (const t of turns.slice(0, 3)) await extractor.extract([t], signal).catch(() => undefined); // warm
  const times: number[] = [];
  let failures = 0;
  const extractorCpu = process.cpuUsage();
  for (const t of turns) {
    const at = performance.now();
    // A model that does not answer the schema fails the turn (the worker retries, then drops it): counted.
    if (!extractor.mayState || extractor.mayState(t)) await extractor.extract([t], signal).catch(() => failures++);
    times.push(performance.now() - at);
  }
  const alone = process.cpuUsage(extractorCpu);
  const timing = {
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    extractorTurnsPerCpuSecond: turns.length / ((alone.user + alone.system) / 1e6),
    failedTurns: `${failures} of ${turns.length}`,
  };
  if (!pipeline) return { ...timing, turnsPerCpuSecond: undefined };
  const cpu = process.cpuUsage();
  for (const [i, turn] of turns.entries()) await memory.observe({ accountId: key, userId: `throughput-${i}` }, turn);
  await memory.settled();
  const used = process.cpuUsage(cpu);
  return { ...timing, turnsPerCpuSecond: turns.length / ((used.user + used.system) / 1e6) };
}
