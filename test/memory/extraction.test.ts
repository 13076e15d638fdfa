import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface MemoryBody {
  id: string;
  content: string;
  source: string;
}

/**
 * The default extractor (the statement model on MiniLM) through the API: facts said the way people say
 * them in chat are remembered, turns that state nothing are not, and a correction supersedes. bench:memory
 * measures it on 438 labelled turns; these are a few of them, as users say them.
 */
describe('memory extraction on the embedded default', () => {
  let upstream: MockUpstream;
  let server: TestServer;
  let apiKey: string;
  let users = 0;

  before(async () => {
    upstream = await startMockUpstream({ defaultText: 'Noted.' });
    server = await startTestServer('sqlite', {
      config: {
        embeddingModel: EMBEDDING_MODEL,
        tiers: { free: { rpm: 10_000, rpd: 100_000 } },
        routing: { 'PV-TURBO': [{ provider: 'openai-compatible', baseUrl: upstream.url, model: 'm', maxRetries: 0 }] },
      },
    });
    ({ apiKey } = await server.createAccount('free', 10_000));
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  const say = async (userId: string, text: string) => {
    const res = await server.request('POST', '/z1/chat/completions', {
      apiKey,
      body: { model: 'PV-TURBO', user_id: userId, messages: [{ role: 'user', content: text }] },
    });
    assert.equal(res.status, 200, res.text);
    await server.running.runtime.memory.settled();
  };
  const memories = async (userId: string) =>
    (
      await server.request<{ data: MemoryBody[] }>('GET', `/z1/memory?user_id=${encodeURIComponent(userId)}`, {
        apiKey,
      })
    ).body.data;

  for (const [said, value] of [
    ['We relocated to Oslo in May', 'Oslo'],
    ["I'm based in Lisbon these days", 'Lisbon'],
    ["I'm a data engineer at Spotify", 'Spotify'],
    ["I can't eat gluten, I have celiac disease", 'gluten'],
    ['Please reply in Spanish from now on', 'Spanish'],
    ['I was born in 1988', '1988'],
    ['I speak French and German', 'French'],
    ['My team uses PostgreSQL and Kafka', 'Kafka'],
  ] as const) {
    it(`remembers "${said}"`, async () => {
      const user = `fact-${users++}`;
      await say(user, said);
      const list = await memories(user);
      assert.ok(
        list.some((m) => m.content.includes(value) && m.source === 'conversation'),
        JSON.stringify(list.map((m) => m.content)),
      );
    });
  }

  for (const said of [
    'I need a summary of this article',
    "Explain it like I'm five",
    'What is the capital of Australia?',
    'Thanks, that was helpful!',
    "I'm so tired today, tell me a joke",
  ]) {
    it(`stores nothing for "${said}"`, async () => {
      const user = `none-${users++}`;
      await say(user, said);
      assert.deepEqual(await memories(user), []);
      assert.deepEqual(
        await server.running.runtime.db.query('SELECT id FROM memory_extractions WHERE user_id = $1', [user]),
        [],
      );
    });
  }

  it('lets a correction supersede the fact it corrects, with its history', async () => {
    await say('moved', 'I live in Tartu.');
    const [tartu] = await memories('moved');
    assert.ok(tartu?.content.includes('Tartu'), JSON.stringify(tartu));
    if (!tartu) return;
    await say('moved', 'Actually, I moved: I live in Pärnu now, not Tartu.');
    const list = await memories('moved');
    assert.equal(list.length, 1, JSON.stringify(list));
    assert.equal(list[0]?.id, tartu.id);
    assert.match(list[0]?.content ?? '', /Pärnu/);
    assert.doesNotMatch(list[0]?.content ?? '', /Tartu/);
    const history = await server.request<{ data: Array<{ event: string; previous_content: string | null }> }>(
      'GET',
      `/z1/memory/${tartu.id}/history?user_id=moved`,
      { apiKey },
    );
    assert.deepEqual(
      history.body.data.map((h) => [h.event, h.previous_content]),
      [
        ['add', null],
        ['update', tartu.content],
      ],
    );
  });

  for (const [user, before, after, value] of [
    ['sean', "My name's Sean.", "it's Seán with the fada, please", 'Seán'],
    ['engaged', "I'm engaged.", 'we got married in August!', 'married'],
  ] as const) {
    it(`lets "${after}" replace "${before}": the user's own name or status is one memory, whichever kind the model reads`, async () => {
      await say(user, before);
      assert.equal((await memories(user)).length, 1);
      await say(user, after);
      const list = await memories(user);
      assert.equal(list.length, 1, JSON.stringify(list));
      assert.match(list[0]?.content ?? '', new RegExp(value));
    });
  }

  it('updates a count that changed, and keeps a second fact of the same kind beside the first', async () => {
    await say('pets', 'I have two cats.');
    await say('pets', 'I also have a dog named Rex.');
    await say('pets', 'Actually we have three cats now.');
    const contents = (await memories('pets')).map((m) => m.content);
    assert.equal(contents.length, 2, JSON.stringify(contents));
    assert.ok(contents.some((c) => /three cats/.test(c)));
    assert.ok(contents.some((c) => /Rex/.test(c)));
    assert.ok(!contents.some((c) => /two cats/.test(c)));
  });

  it('forgets what the user asks it to forget', async () => {
    await say('forgets', 'I have a peanut allergy.');
    assert.equal((await memories('forgets')).length, 1);
    await say('forgets', 'Please forget that I have a peanut allergy.');
    assert.deepEqual(await memories('forgets'), []);
  });
});
