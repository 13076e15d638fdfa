import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type MemoryWrites, reconcile } from '../../src/memory/reconcile.js';
import type { Extraction, MemoryRecord, MemoryStore, Tenant } from '../../src/memory/types.js';

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
    // No embedder: facts are compared by their words only.
    vectors: async (texts) => texts.map(() => undefined),
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
  const store = {
    inSlot: async (_t: Tenant, slot: string) => list.filter((m) => m.slot === slot).reverse(),
  } as MemoryStore;
  const apply = async (extraction: Extraction) => (await reconcile(writes, tenant, extraction, store)).map((d) => d.op);
  const fact = (content: string, slot: string | null = null, replaces?: string[]): Extraction => ({
    facts: [{ content, slot, ...(replaces ? { correction: { replaces } } : {}) }],
    forget: [],
  });
  const forget = (content: string): Extraction => ({ facts: [], forget: [{ content, slot: null }] });
  return { list, apply, fact, forget, contents: () => list.map((m) => m.content) };
}

describe('memory reconciliation compares facts by their words', () => {
  it('keeps a negation: "does not like" is not a repeat of "likes"', async () => {
    const m = memories(['The user likes meat.', 'hobbies']);
    assert.deepEqual(await m.apply(m.fact("The user doesn't like meat.", 'diet')), ['add']);
    assert.deepEqual(m.contents(), ['The user likes meat.', "The user doesn't like meat."]);
  });

  it('reads a word with or without its accents as one word, as the index does', async () => {
    const m = memories(['The user is allergic to crème fraîche.', 'health'], ['The user lives in Köln.', 'home']);
    assert.deepEqual(await m.apply(m.fact('The user is allergic to creme fraiche.', 'health')), ['none']);
    assert.deepEqual(await m.apply(m.fact('The user lives in Koln.', 'home')), ['none']);
    assert.deepEqual(m.contents(), ['The user is allergic to crème fraîche.', 'The user lives in Köln.']);
  });

  it('keeps the words that tell two facts apart, and drops only the frame of a fact', async () => {
    const m = memories(['The user runs before breakfast.', 'schedule'], ['The user is a morning person.', null]);
    assert.deepEqual(await m.apply(m.fact('The user runs after breakfast.', 'schedule')), ['add']);
    assert.deepEqual(await m.apply(m.fact('The user is not a morning person.')), ['add']);
    assert.deepEqual(await m.apply(m.fact('The user is allergic to peanuts.', 'health')), ['add']);
    assert.deepEqual(await m.apply(m.fact('The user is allergic to peanuts.', 'health')), ['none']);
    assert.equal(m.list.length, 5);
  });

  it('forgets what most of the request names, and no fact that shares only a stem with it', async () => {
    const m = memories(['The user is allergic to peanuts.', 'health'], ['The user has a dog named Rex.', 'pets']);
    assert.deepEqual(await m.apply(m.forget('The user is allergic to peanut butter.')), []);
    assert.deepEqual(await m.apply(m.forget("The user's dog's name is Miso.")), []);
    assert.equal(m.list.length, 2);
    assert.deepEqual(await m.apply(m.forget('The user is allergic to peanuts.')), ['delete']);
    assert.deepEqual(m.contents(), ['The user has a dog named Rex.']);
  });
});

describe('memory reconciliation supersedes by kind', () => {
  it('replaces the memory of a kind that holds one value (where the user lives), keeping one memory', async () => {
    const m = memories(['The user lives in Tartu.', 'home'], ['The user speaks Estonian.', 'language']);
    assert.deepEqual(await m.apply(m.fact('The user is based in Pärnu these days.', 'home')), ['update']);
    assert.deepEqual(m.contents(), ['The user is based in Pärnu these days.', 'The user speaks Estonian.']);
  });

  it('adds beside a kind of many values, and supersedes only when the count changed', async () => {
    const m = memories(['The user speaks French.', 'language'], ['The user has two cats.', 'pets']);
    assert.deepEqual(await m.apply(m.fact('The user speaks German.', 'language')), ['add']);
    assert.deepEqual(await m.apply(m.fact('The user has a dog.', 'pets')), ['add']);
    assert.deepEqual(await m.apply(m.fact('The user has three cats.', 'pets')), ['update']);
    assert.deepEqual(m.contents(), [
      'The user speaks French.',
      'The user has three cats.',
      'The user speaks German.',
      'The user has a dog.',
    ]);
  });

  it('supersedes the memory holding the value a correction names, and swaps only the value for a bare correction', async () => {
    const m = memories(['The user uses VS Code.', 'tools'], ['The user has two kids.', 'family']);
    assert.deepEqual(
      await m.apply(m.fact('The user switched from VS Code to Neovim last month.', 'tools', ['VS Code'])),
      ['update'],
    );
    assert.deepEqual(await m.apply(m.fact("The user: it's three kids.", 'family', ['two'])), ['update']);
    assert.deepEqual(m.contents(), [
      'The user switched from VS Code to Neovim last month.',
      'The user has three kids.',
    ]);
  });

  it('applies the same extraction twice as once (a job resumed after a crash)', async () => {
    const m = memories(['The user lives in Tartu.', 'home']);
    const correction = m.fact('The user lives in Pärnu now.', 'home', ['Tartu']);
    assert.deepEqual(await m.apply(correction), ['update']);
    assert.deepEqual(await m.apply(correction), ['none']);
    assert.deepEqual(m.contents(), ['The user lives in Pärnu now.']);
  });
});
