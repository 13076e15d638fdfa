import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface MemoryBody {
  content: string;
  source: string;
}

describe('memory extraction by a model (memory.extractionModel)', () => {
  let upstream: MockUpstream;
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    upstream = await startMockUpstream({ defaultText: 'Sure.' });
    const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
    server = await startTestServer('sqlite', {
      config: {
        tiers: { free: { rpm: 10_000, rpd: 100_000 } },
        routing: { 'PV-TURBO': [target], 'PV-STANDARD': [{ ...target, model: 'extractor' }] },
        memory: { extractionModel: 'PV-STANDARD' },
      },
    });
    ({ apiKey } = await server.createAccount('free', 100));
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  const say = (text: string, user = 'kim') =>
    server.request('POST', '/z1/chat/completions', {
      apiKey,
      body: { model: 'PV-TURBO', user_id: user, skip_cache: true, messages: [{ role: 'user', content: text }] },
    });
  const memories = async (user = 'kim') =>
    (await server.request<{ data: MemoryBody[] }>('GET', `/z1/memory?user_id=${user}`, { apiKey })).body.data;

  it('asks the model for a JSON-schema answer and stores the facts it found', async () => {
    upstream.scriptModel('extractor', {
      kind: 'answer',
      text: JSON.stringify({
        facts: [
          { content: 'The user keeps bees in Devon.', kind: 'hobbies', replaces: [] },
          { content: 'The user is called Kim.', kind: 'name', replaces: [] },
        ],
        forget: [],
      }),
    });
    assert.equal((await say('Hello, Kim here; my hives in Devon are doing well')).status, 200);
    const list = await eventually(memories, (l) => l.length >= 2, 5000);
    assert.deepEqual(list.map((m) => m.content).sort(), ['The user is called Kim.', 'The user keeps bees in Devon.']);
    assert.ok(list.every((m) => m.source === 'conversation'));

    const call = upstream.requests.find((r) => r.model === 'extractor');
    const body = call?.body as {
      response_format: { type: string; json_schema: { name: string } };
      messages: Array<{ content: string }>;
    };
    assert.equal(body.response_format.type, 'json_schema');
    assert.equal(body.response_format.json_schema.name, 'memory_extraction');
    assert.match(body.messages.at(-1)?.content ?? '', /hives in Devon/);
  });

  it('applies a correction the model reports under the same kind, and ignores an answer that is not the schema', async () => {
    upstream.scriptModel('extractor', {
      kind: 'answer',
      text: JSON.stringify({
        facts: [{ content: 'The user is called Kimberly.', kind: 'name', replaces: ['Kim'] }],
        forget: [],
      }),
    });
    await say('Actually, call me Kimberly');
    let list = await eventually(memories, (l) => l.some((m) => m.content.includes('Kimberly')), 5000);
    assert.equal(list.length, 2);
    assert.ok(!list.some((m) => m.content === 'The user is called Kim.'));

    upstream.scriptModel('extractor', { kind: 'answer', text: 'Kim likes bees, I think.' });
    const before = upstream.requests.filter((r) => r.model === 'extractor').length;
    assert.equal((await say('I also like honey')).status, 200);
    await eventually(
      async () => upstream.requests.filter((r) => r.model === 'extractor').length,
      (n) => n > before,
      5000,
    );
    upstream.scriptModel('extractor', { kind: 'status', status: 500 });
    assert.equal((await say('And I live in Exeter')).status, 200);
    list = await memories();
    assert.equal(list.length, 2);
  });

  it('stores no fact that shares no word with what the user said (a small model copying its instructions)', async () => {
    upstream.scriptModel('extractor', {
      kind: 'answer',
      text: JSON.stringify({
        facts: [
          { content: 'The user is allergic to peanuts.', kind: 'health', replaces: [] },
          { content: 'The user speaks Estonian.', kind: 'reply_language', replaces: [] },
        ],
        forget: [],
      }),
    });
    // Another end user: kim's turns wait behind the failed extractions above (a user's turns go in order).
    assert.equal((await say('Please use Estonian whenever you talk to me', 'tiit')).status, 200);
    const list = await eventually(
      () => memories('tiit'),
      (l) => l.length > 0,
      5000,
    );
    assert.ok(list.some((m) => m.content === 'The user speaks Estonian.'));
    assert.ok(!list.some((m) => m.content.includes('peanuts')));
  });
});
