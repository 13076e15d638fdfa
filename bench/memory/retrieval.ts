/**
 * bench:memory's retrieval half, end to end over HTTP (a real server on SQLite with the MiniLM embedder; a
 * mock OpenAI upstream answers and records the prompt pvai sent):
 * - 50 scripted multi-session conversations (conversations.ts), run in two accounts that reuse the same user
 *   ids with different facts; after each user's sessions, a question whose answer depends on an earlier
 *   session. Hit: the needed fact is among the memories in the prompt (and a superseded one is not). False
 *   memory: a memory in the prompt that is not one of this user's own.
 * - The latency memory adds to a chat request for a user with 10,000 memories (query embedding included):
 *   chat p50/p95 with memory minus without, and the retrieval time the response reports.
 * Targets: hit rate ≥ 90 %, false memories 0, p95 added ≤ 20 ms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.js';
import { startServer } from '../../src/server.js';
import { type MockUpstream, startMockUpstream } from '../../test/support/mock-openai-upstream.js';
import { table } from '../lib.js';
import { type Conversation, conversations } from './conversations.js';

const NOTES_HEADER = 'What you know about the user';
const ADMIN = 'bench-admin-token-0123456789';

function notesOf(upstream: MockUpstream): string[] {
  const body = upstream.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
  const system = body.messages.find((m) => m.role === 'system' && m.content.startsWith(NOTES_HEADER));
  return (system?.content.split('\n').slice(1) ?? []).map((line) => line.replace(/^- /, ''));
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function runRetrieval(embeddingModel: string, quick: boolean): Promise<void> {
  const BIG_USER_MEMORIES = quick ? 1000 : 10_000;
  const LATENCY_SAMPLES = quick ? 50 : 200;
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-bench-memory-'));
  const upstream = await startMockUpstream({ defaultText: 'OK.' });
  const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
  const config = loadConfig(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      dataDir,
      adminToken: ADMIN,
      logLevel: 'silent',
      embeddingModel,
      tiers: { free: { rpm: 1_000_000, rpd: 1_000_000, monthly: 10_000_000 } },
      routing: { 'PV-TURBO': [target] },
    },
  );
  const server = await startServer(config, { logger: pino({ level: 'silent' }) });
  const { memory } = server.runtime;
  const call = async <T>(method: string, path: string, key: string, body?: unknown): Promise<T> => {
    const res = await fetch(server.url + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const accountIds = new Map<string, string>();
  const account = async () => {
    const made = await call<{ api_key: string; account: { id: string } }>('POST', '/admin/accounts', ADMIN, {
      email: `${Math.random().toString(36).slice(2)}@bench.example`,
      tier: 'free',
      credits: 1_000_000,
    });
    accountIds.set(made.api_key, made.account.id);
    return made.api_key;
  };
  const chat = (key: string, userId: string, text: string, extra: object = {}) =>
    call<{ memory_context: { retrieval_time_ms: number; items_retrieved: number } }>(
      'POST',
      '/z1/chat/completions',
      key,
      {
        model: 'PV-TURBO',
        user_id: userId,
        skip_cache: true,
        messages: [{ role: 'user', content: text }],
        ...extra,
      },
    );

  try {
    // --- Recall and isolation -------------------------------------------------------------------
    const keys = [await account(), await account()];
    const all = conversations(quick ? 2 : 5);
    // The second account: the same user ids, the facts of the next conversation of the same kind.
    const runs: Array<{ key: string; c: Conversation }> = [
      ...all.map((c) => ({ key: keys[0] as string, c })),
      ...all.map((c, i) => ({
        key: keys[1] as string,
        c: { ...(all[(i + 10) % all.length] as Conversation), userId: c.userId },
      })),
    ];
    const maxSessions = Math.max(...runs.map((r) => r.c.sessions.length));
    for (let s = 0; s < maxSessions; s++) {
      for (const { key, c } of runs) {
        for (const turn of c.sessions[s] ?? []) await chat(key, c.userId, turn);
      }
      await memory.settled(); // sessions are days apart: the previous one's extraction is done
    }
    let hits = 0;
    let falseMemories = 0;
    let retrieved = 0;
    const misses: string[] = [];
    for (const { key, c } of runs) {
      upstream.reset();
      await chat(key, c.userId, c.question);
      const notes = notesOf(upstream);
      const own = new Set(
        (await call<{ data: Array<{ content: string }> }>('GET', `/z1/memory?user_id=${c.userId}`, key)).data.map(
          (m) => m.content,
        ),
      );
      retrieved += notes.length;
      falseMemories += notes.filter((n) => !own.has(n)).length;
      const text = notes.join('\n');
      if (text.includes(c.expect) && !(c.reject && text.includes(c.reject))) hits++;
      else misses.push(`${c.userId}: "${c.question}" → [${notes.join(' | ')}]`);
    }
    const questions = runs.length;

    // --- Latency at many memories ---------------------------------------------------------------
    const big = keys[0] as string;
    const started = performance.now();
    const topics = ['likes', 'visited', 'owns', 'read', 'watched', 'cooked', 'learned', 'bought'];
    for (let i = 0; i < BIG_USER_MEMORIES; i++) {
      await memory.create(
        { accountId: accountIds.get(big) as string, userId: 'big' },
        { content: `The user ${topics[i % topics.length]} item number ${i} in collection ${i % 97}.` },
      );
    }
    const fillSeconds = (performance.now() - started) / 1000;
    const questionsForBig = ['Which items did I visit?', 'What did I cook last?', 'Tell me about collection 42'];
    const timed = async (extra: object) => {
      const out: number[] = [];
      const reported: number[] = [];
      for (let i = 0; i < LATENCY_SAMPLES; i++) {
        const t = performance.now();
        const r = await chat(big, 'big', questionsForBig[i % questionsForBig.length] as string, extra);
        out.push(performance.now() - t);
        reported.push(r.memory_context.retrieval_time_ms);
      }
      return { out, reported };
    };
    await timed({ use_memory: false }); // warm-up
    const off = await timed({ use_memory: false });
    const on = await timed({});

    // --- What extraction adds to the answer: a turn that states a fact is queued durably before its answer
    // goes out, and extracted behind it (each by a new user, so no memory is read). Against the same turns
    // with use_memory: false, which neither reads nor queues.
    await memory.settled();
    const stating = async (extra: object, tag: string) => {
      const out: number[] = [];
      for (let i = 0; i < LATENCY_SAMPLES; i++) {
        const t = performance.now();
        await chat(big, `${tag}-${i}`, `I keep ${i % 9} beehives in my garden in Tartu and I work as a nurse.`, extra);
        out.push(performance.now() - t);
      }
      return out;
    };
    await stating({ use_memory: false }, 'warm');
    const unqueued = await stating({ use_memory: false }, 'off');
    const queued = await stating({}, 'queued');
    await memory.settled();

    console.log('\nretrieval: memories in the prompt, and the latency they add\n');
    console.log(
      table(
        ['measure', 'value', 'target'],
        [
          ['conversations (2 accounts × users)', questions, '≥ 40'],
          ['retrieval hit rate', `${((hits / questions) * 100).toFixed(1)} %`, '≥ 90 %'],
          ['false memories (another user’s item retrieved)', falseMemories, '0'],
          ['memories retrieved per question (mean)', Number((retrieved / questions).toFixed(2)), ''],
          [
            `chat p50 with / without memory, ${BIG_USER_MEMORIES.toLocaleString('en-US')} memories (ms)`,
            `${percentile(on.out, 50).toFixed(2)} / ${percentile(off.out, 50).toFixed(2)}`,
            '',
          ],
          ['added latency p50 (ms)', Number((percentile(on.out, 50) - percentile(off.out, 50)).toFixed(2)), ''],
          ['added latency p95 (ms)', Number((percentile(on.out, 95) - percentile(off.out, 95)).toFixed(2)), '≤ 20'],
          [
            'retrieval_time_ms reported, p50 / p95',
            `${percentile(on.reported, 50)} / ${percentile(on.reported, 95)}`,
            '',
          ],
          [
            'a fact-stating turn, queued for extraction vs use_memory: false: added p50 / p95 (ms)',
            `${(percentile(queued, 50) - percentile(unqueued, 50)).toFixed(2)} / ${(percentile(queued, 95) - percentile(unqueued, 95)).toFixed(2)}`,
            '≤ 20 (p95)',
          ],
          [
            `filling ${BIG_USER_MEMORIES.toLocaleString('en-US')} memories through the API path (s)`,
            Number(fillSeconds.toFixed(1)),
            '',
          ],
        ],
      ),
    );
    if (misses.length > 0) console.log(`\nmisses:\n${misses.map((m) => `  ${m}`).join('\n')}`);
  } finally {
    await server.close();
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
