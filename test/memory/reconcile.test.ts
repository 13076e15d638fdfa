import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type MemoryWrites, reconcile } from '../../src/memory/reconcile.js';
import { RuleBasedExtractor } from '../../src/memory/rule-extractor.js';
import type { MemoryRecord, MemoryStore, Tenant } from '../../src/memory/types.js';

const tenant: Tenant = { accountId: 'a', userId: 'u' };

/** One user's memories in an array: search returns them all (reconcile compares the words itself). */
function memories(...contents: Array<[string, string | null]>) {
  const list: MemoryRecord[] = contents.map(([content, slot], i) => ({
    ...tenant,
    id: `m${i}`,
    content,
    slot,
    metadata: {},
    source: 'conversation',
    createdAt: i,
    updatedAt: i,
  }));
  let next = list.length;
  const writes: MemoryWrites = {
    search: async (_t, _q, k) => list.slice(0, k).map((m) => ({ ...m, score: 1 })),
    create: async (_t, input) => {
      const m = { ...(list[0] as MemoryRecord), id: `m${next++}`, content: input.content, slot: input.slot ?? null };
      list.push(m);
      return m;
    },
    update: async (_t, id, change) => {
      const m = list.find((x) => x.id === id) as MemoryRecord;
      m.content = change.content;
      return m;
    },
    delete: async (_t, id) => {
      list.splice(
        list.findIndex((x) => x.id === id),
        1,
      );
    },
  };
  const store = { bySlot: async (_t: Tenant, slot: string) => list.find((m) => m.slot === slot) } as MemoryStore;
  const say = async (turn: string) =>
    (await reconcile(writes, tenant, new RuleBasedExtractor().extractNow([turn]), store)).map((d) => d.op);
  return { list, say, contents: () => list.map((m) => m.content) };
}

describe('memory reconciliation compares facts by their words', () => {
  it('keeps a negation: "does not like" corrects "likes", it does not repeat it', async () => {
    const m = memories(['The user likes meat.', 'taste:meat']);
    assert.deepEqual(await m.say("I don't like meat."), ['update']);
    assert.deepEqual(m.contents(), ['The user does not like meat.']);
  });

  it('reads a word with or without its accents as one word, as the index does', async () => {
    const m = memories(['The user is allergic to crème fraîche.', null], ['The user lives in Köln.', 'location']);
    assert.deepEqual(await m.say('I am allergic to creme fraiche.'), ['none']);
    assert.deepEqual(await m.say('I live in Koln.'), ['none']);
    assert.deepEqual(m.contents(), ['The user is allergic to crème fraîche.', 'The user lives in Köln.']);
  });

  it('keeps the words that tell two facts apart, and drops only the frame of a fact', async () => {
    const m = memories(['The user run before breakfast.', null], ['The user is a morning person.', null]);
    assert.deepEqual(await m.say('Remember that I run after breakfast'), ['add']);
    assert.deepEqual(await m.say('Remember that I am not a morning person'), ['add']);
    assert.deepEqual(await m.say('Just so you know, I am allergic to peanuts.'), ['add']);
    assert.deepEqual(await m.say("I'm allergic to peanuts."), ['none']);
    assert.equal(m.list.length, 5);
  });

  it('forgets what most of the request names, and no fact that shares only a stem with it', async () => {
    const m = memories(['The user is allergic to peanuts.', null], ['The user has a dog named Rex.', null]);
    assert.deepEqual(await m.say("Forget that I'm allergic to peanut butter."), []);
    assert.deepEqual(await m.say("Forget that my dog's name is Miso."), []);
    assert.equal(m.list.length, 2);
    assert.deepEqual(await m.say('Please forget that I am allergic to peanuts.'), ['delete']);
    assert.deepEqual(m.contents(), ['The user has a dog named Rex.']);
  });
});
