import { type Analysis, analyze } from '../text/index.js';
import type { CandidateFact, Extraction, MemoryRecord, MemoryStore, ScoredMemory, Tenant } from './types.js';

/** What reconciling writes through: MemoryService's own operations, so each change is indexed and versioned as an API call's is. */
export interface MemoryWrites {
  search(tenant: Tenant, query: string, k: number): Promise<ScoredMemory[]>;
  create(
    tenant: Tenant,
    input: { content: string; slot?: string | null },
    source: 'conversation',
  ): Promise<MemoryRecord>;
  update(tenant: Tenant, id: string, change: { content: string }, source: 'conversation'): Promise<MemoryRecord>;
  delete(tenant: Tenant, id: string, source: 'conversation'): Promise<void>;
}

/** Token overlap (Jaccard) at or above which a new fact repeats a stored one (measured on bench:memory's paraphrases). */
const DUPLICATE_OVERLAP = 0.8;
/** Share of a "forget …" request's words a memory must contain to be the one forgotten. */
const FORGET_OVERLAP = 0.6;
/** Similar memories compared with each candidate. */
const NEIGHBOURS = 5;

/**
 * How facts are compared: text/'s tokeniser with accents folded ("Köln" is "Koln", as the index reads it),
 * but without its English stop words or its stems. The English list drops words that tell two facts apart
 * ("not", "before"/"after", "was"), so "The user is not a morning person" would repeat "The user is a
 * morning person". Stems make forgetting, which deletes, reach too far: "forget that I'm allergic to peanut
 * butter" would delete "The user is allergic to peanuts", "forget that my dog's name is Miso" would delete
 * "The user has a dog named Rex". What is dropped instead is the frame every fact shares ("The user's … is …").
 */
const FACT_WORDS: Analysis = {
  stem: false,
  stopWords: new Set(['the', 'user', 's', 'a', 'an', 'is', 'are', 'to', 'in', 'of', 'that', 'i', 'my']),
};

function terms(text: string): Set<string> {
  return new Set(analyze(text, FACT_WORDS));
}

function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const t of a) if (b.has(t)) shared++;
  return shared / (a.size + b.size - shared);
}

/** Share of `wanted`'s terms that `text` contains. */
function covers(text: Set<string>, wanted: Set<string>): number {
  if (wanted.size === 0) return 0;
  let found = 0;
  for (const t of wanted) if (text.has(t)) found++;
  return found / wanted.size;
}

export type Decision =
  | { op: 'add'; fact: CandidateFact }
  | { op: 'update'; memory: MemoryRecord; fact: CandidateFact }
  | { op: 'delete'; memory: MemoryRecord }
  | { op: 'none'; fact: CandidateFact; reason: 'duplicate' };

/**
 * mem0's four operations, decided deterministically against the user's most similar memories:
 * - **delete** what a "forget …" names (its slot's memory, else memories containing most of its words);
 * - **update** the memory holding a candidate's slot when the value changed (a correction: the old text
 *   stays in the memory's history with the time it changed);
 * - **none** for a candidate that repeats a memory (same text, or ≥ 80 % of the same words);
 * - **add** otherwise.
 * Candidates are applied in order, so "I live in Lyon. Actually, I moved to Paris." ends with Paris.
 */
export async function reconcile(
  memories: MemoryWrites,
  tenant: Tenant,
  extraction: Extraction,
  store: MemoryStore,
): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (const request of extraction.forget) {
    const targets: MemoryRecord[] = [];
    const bySlot = request.slot ? await store.bySlot(tenant, request.slot) : undefined;
    if (bySlot) targets.push(bySlot);
    else {
      const wanted = terms(request.content);
      for (const m of await memories.search(tenant, request.content, NEIGHBOURS)) {
        if (covers(terms(m.content), wanted) >= FORGET_OVERLAP) targets.push(m);
      }
    }
    for (const memory of targets) {
      await memories.delete(tenant, memory.id, 'conversation');
      decisions.push({ op: 'delete', memory });
    }
  }
  for (const fact of extraction.facts) {
    const current = fact.slot ? await store.bySlot(tenant, fact.slot) : undefined;
    if (current) {
      if (overlap(terms(current.content), terms(fact.content)) >= 1) {
        decisions.push({ op: 'none', fact, reason: 'duplicate' });
        continue;
      }
      await memories.update(tenant, current.id, { content: fact.content }, 'conversation');
      decisions.push({ op: 'update', memory: current, fact });
      continue;
    }
    const words = terms(fact.content);
    const similar = await memories.search(tenant, fact.content, NEIGHBOURS);
    if (similar.some((m) => overlap(terms(m.content), words) >= DUPLICATE_OVERLAP)) {
      decisions.push({ op: 'none', fact, reason: 'duplicate' });
      continue;
    }
    await memories.create(tenant, { content: fact.content, slot: fact.slot }, 'conversation');
    decisions.push({ op: 'add', fact });
  }
  return decisions;
}
