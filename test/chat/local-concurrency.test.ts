import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { eventually } from '../support/eventually.js';
import { requireSetUp, SMOLLM2_MODEL, setUpSkip } from '../support/models.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** A streamed chat as it arrives: when each content piece came (ms since the request was sent). */
interface Arrivals {
  status: number;
  headers: Headers;
  body?: unknown;
  pieces: number[];
}

/**
 * The behaviour concurrency on the local engine relies on, over real HTTP with SmolLM2 (slow enough, ~100
 * tokens/s on two cores, that one answer of 200 tokens holds a sequence for seconds): requests on separate
 * sequences progress together, a full queue and a wait past its bound are 503 SERVER_BUSY with Retry-After,
 * and `pvai_local_engine_queue` follows the sequences held and the requests waiting.
 */
describe('the local engine under concurrent requests', { skip: setUpSkip([SMOLLM2_MODEL]) }, () => {
  let server: TestServer;
  let apiKey: string;

  async function chat(content: string, maxTokens: number, signal?: AbortSignal): Promise<Arrivals> {
    const sent = performance.now();
    const res = await fetch(`${server.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        model: 'PV-TURBO',
        user_id: 'concurrency',
        skip_cache: true,
        stream: true,
        temperature: 0,
        max_tokens: maxTokens,
        messages: [{ role: 'user', content }],
      }),
      ...(signal ? { signal } : {}),
    });
    if (res.status !== 200) return { status: res.status, headers: res.headers, body: await res.json(), pieces: [] };
    const pieces: number[] = [];
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body ?? []) {
        for (const line of decoder.decode(chunk as Uint8Array, { stream: true }).split('\n')) {
          if (line.startsWith('data: {') && line.includes('"content":"')) pieces.push(performance.now() - sent);
        }
      }
    } catch (err) {
      if (!signal?.aborted) throw err;
    }
    return { status: 200, headers: res.headers, pieces };
  }

  /** One family of GET /metrics, by name: its value for each value of `label`. */
  async function scraped(name: string, label: string): Promise<Map<string, number>> {
    const res = await fetch(`${server.url}/metrics`);
    const family = parsePrometheusTextFormat(await res.text()).find((f) => f.name === name);
    assert.ok(family, `${name} is exposed`);
    return new Map(family.metrics.map((m) => [m.labels?.[label] ?? '', Number(m.value)]));
  }

  async function queueGauge(): Promise<{ active: number; queued: number }> {
    const states = await scraped('pvai_local_engine_queue', 'state');
    return { active: states.get('active') ?? 0, queued: states.get('queued') ?? 0 };
  }

  /** `pvai_local_engine_prompt_tokens_total` by kind, as scraped. */
  async function promptTokens(): Promise<{ reused: number; evaluated: number }> {
    const kinds = await scraped('pvai_local_engine_prompt_tokens_total', 'kind');
    return { reused: kinds.get('reused') ?? 0, evaluated: kinds.get('evaluated') ?? 0 };
  }

  /** The gauge once `done` holds of it (20 s at most; the assertion after it names what it last read). */
  async function queueWhen(
    done: (g: { active: number; queued: number }) => boolean,
    what: string,
  ): Promise<{ active: number; queued: number }> {
    const gauge = await eventually(queueGauge, done, 20_000);
    assert.ok(done(gauge), `${what}: still ${JSON.stringify(gauge)}`);
    return gauge;
  }

  /** A server on SmolLM2 with these local-engine settings, an account, and the model loaded before anything is timed. */
  async function serve(localEngine: Record<string, number>): Promise<void> {
    requireSetUp([SMOLLM2_MODEL]);
    server = await startTestServer('sqlite', {
      config: { localModel: SMOLLM2_MODEL, tiers: { startup: { rpm: 10_000 } }, localEngine },
    });
    apiKey = (await server.createAccount('startup', 1000)).apiKey;
    await chat('Hello', 2);
  }

  describe('two sequences', () => {
    before(() => serve({ threads: 1, sequences: 2, maxQueue: 0 }));
    after(() => server?.close());

    it('two requests at once both progress: each streams before the other has finished', async () => {
      const [a, b] = await Promise.all([
        chat('Write a long story about a lighthouse keeper and his dog.', 80),
        chat('Describe, at length, how bread is baked in a village bakery.', 80),
      ]);
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      assert.ok(a.pieces.length > 20 && b.pieces.length > 20, `${a.pieces.length} and ${b.pieces.length} pieces`);
      const [aFirst, aLast] = [a.pieces[0] ?? 0, a.pieces.at(-1) ?? 0];
      const [bFirst, bLast] = [b.pieces[0] ?? 0, b.pieces.at(-1) ?? 0];
      // Served one after the other, the second's first piece would come after the first's last.
      assert.ok(bFirst < aLast && aFirst < bLast, `a ${aFirst}–${aLast} ms, b ${bFirst}–${bLast} ms`);
      const overlap = Math.min(aLast, bLast) - Math.max(aFirst, bFirst);
      const shorter = Math.min(aLast - aFirst, bLast - bFirst);
      assert.ok(overlap > shorter / 2, `they ran side by side for ${overlap} of ${shorter} ms`);
    });

    it("reuses a shared system prompt's tokens across end users, with memory's context after it", async () => {
      const system =
        'You are the help desk of the Harbor Street warehouse. Opening hours are eight to six on weekdays and nine ' +
        'to one on Saturdays. Deliveries arrive at gate two; returns go to gate four with their slip. The manager is ' +
        'Ms Okafor, the safety officer Mr Lind. Forklifts are only driven by staff who hold a licence. Answer briefly.';
      const ask = async (user: string, question: string) => {
        const res = await fetch(`${server.url}/z1/chat/completions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({
            model: 'PV-TURBO',
            user_id: user,
            skip_cache: true,
            temperature: 0,
            max_tokens: 4,
            messages: [
              { role: 'system', content: system },
              { role: 'user', content: question },
            ],
          }),
        });
        assert.equal(res.status, 200, await res.clone().text());
        return (await res.json()) as { usage: { prompt_tokens: number }; memory_context: { items_retrieved: number } };
      };
      const created = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'ana', content: 'Ana works the night shift at gate four.' },
      });
      assert.equal(created.status, 201);
      const atStart = await promptTokens();
      assert.deepEqual(await promptTokens(), atStart, 'a scrape alone counts nothing');
      // Ana's remembered fact is gathered as context on her turn: the prompt is the system prompt, her memory, her question.
      const ana = await ask('ana', 'Which gate do I work at, and on which shift?');
      assert.ok(ana.memory_context.items_retrieved >= 1, 'her memory was in the prompt');
      const before = await promptTokens();
      assert.ok(before.evaluated - atStart.evaluated > 0);
      const bo = await ask('bo', 'Where do deliveries arrive?');
      const after = await promptTokens();
      const reused = after.reused - before.reused;
      const evaluated = after.evaluated - before.evaluated;
      // ~90 tokens of system prompt: they were already in the sequence Ana's request left, before her memory.
      assert.equal(reused + evaluated, bo.usage.prompt_tokens, 'every prompt token is either');
      assert.ok(reused >= 60, `reused ${reused} of ${bo.usage.prompt_tokens} prompt tokens`);
    });
  });

  describe('one sequence, a queue of one, a wait bound of 700 ms', () => {
    before(() => serve({ threads: 1, sequences: 1, maxQueue: 1, maxQueueWaitMs: 700 }));
    after(() => server?.close());

    it('a full queue is 503 SERVER_BUSY with Retry-After; a wait past its bound too; the gauge follows', async () => {
      assert.deepEqual(await queueGauge(), { active: 0, queued: 0 });
      const holder = new AbortController();
      const holding = chat('Write a very long story about the sea, chapter by chapter.', 1000, holder.signal);
      await queueWhen((g) => g.active === 1, 'the first request holds the sequence');

      const queuedAt = performance.now();
      const waiting = chat('And another story, please.', 20);
      await queueWhen((g) => g.queued === 1, 'the second request waits');

      const refused = await chat('A third one.', 20);
      assert.equal(refused.status, 503);
      assert.equal((refused.body as { error: { code: string } }).error.code, 'server_busy');
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${refused.headers.get('retry-after')}`);

      const timedOut = await waiting;
      const waited = performance.now() - queuedAt;
      assert.equal(timedOut.status, 503, 'the waiter gave up at its bound');
      assert.equal((timedOut.body as { error: { code: string } }).error.code, 'server_busy');
      assert.match((timedOut.body as { error: { message: string } }).error.message, /capacity/);
      assert.ok(Number(timedOut.headers.get('retry-after')) >= 1);
      assert.ok(waited >= 650 && waited < 5000, `answered after ${waited} ms`);
      assert.deepEqual(await queueGauge(), { active: 1, queued: 0 }, 'the waiter left the queue');

      holder.abort();
      await holding;
      await queueWhen((g) => g.active === 0 && g.queued === 0, 'the sequence comes back');
      const after = await chat('Hello again.', 5);
      assert.equal(after.status, 200, 'served once the sequence is free');
    });
  });
});
