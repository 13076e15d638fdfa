import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { chatRequests, type ResponsesHarness, startResponses, streamResponse, systemText } from './support.js';

interface MemoryBody {
  content: string;
  user_id: string;
}

/**
 * Memory is on by default for responses as for chat: what the end user states is learned after the answer,
 * whether it was returned whole or streamed, and offered to their later responses; `use_memory: false`
 * neither reads nor writes.
 */
for (const backend of backends()) {
  describe(`memory in responses (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Noted.', config: { embeddingModel: EMBEDDING_MODEL } });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const memories = async (userId: string) =>
      (
        await h.server.request<{ data: MemoryBody[] }>('GET', `/z1/memory?user_id=${userId}`, { apiKey: h.apiKey })
      ).body.data
        .map((m) => m.content)
        .sort();
    const memoriesUntil = (userId: string, count: number) =>
      eventually(
        () => memories(userId),
        (list) => list.length >= count,
        5000,
      );

    it('learns what the end user says in a response, whole or streamed, and offers it to their next one', async () => {
      const whole = await h.create({
        model: 'PV-TURBO',
        user_id: 'ada',
        input: 'Hi! My name is Ada Lovelace and I live in Lyon.',
      });
      assert.equal(whole.status, 200, whole.text);
      assert.deepEqual(await memoriesUntil('ada', 2), ['The user lives in Lyon.', "The user's name is Ada Lovelace."]);

      const streamed = await streamResponse(h.server, h.apiKey, {
        model: 'PV-TURBO',
        user_id: 'grace',
        input: 'Hello, my name is Grace Hopper and I live in Arlington.',
      });
      assert.equal(streamed.events.at(-1)?.data.type, 'response.completed');
      assert.deepEqual(await memoriesUntil('grace', 2), [
        'The user lives in Arlington.',
        "The user's name is Grace Hopper.",
      ]);

      h.upstream.reset();
      const later = await h.create({ model: 'PV-TURBO', user_id: 'ada', input: 'Which city do I live in?' });
      assert.equal(later.status, 200, later.text);
      assert.match(systemText(chatRequests(h.upstream)[0]), /The user lives in Lyon\./);
      const context = (later.body as unknown as { memory_context: { items_retrieved: number } }).memory_context;
      assert.ok(context.items_retrieved >= 1, JSON.stringify(context));
      assert.doesNotMatch(systemText(chatRequests(h.upstream)[0]), /Arlington|Grace/);
    });

    it('use_memory: false neither learns nor reads', async () => {
      const res = await h.create({
        model: 'PV-TURBO',
        user_id: 'ada',
        use_memory: false,
        input: 'By the way, I have a cat named Turing.',
      });
      assert.equal(res.status, 200, res.text);
      assert.doesNotMatch(systemText(chatRequests(h.upstream)[0]), /Lyon/);
      // Extraction runs behind the answer: give it the time it took above before looking.
      await sleep(1500);
      assert.ok(!(await memories('ada')).some((m) => /Turing|cat/.test(m)));
    });
  });
}
