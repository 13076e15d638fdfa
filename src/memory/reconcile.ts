import { type Analysis, analyze } from '../text/index.js';
import { holdsOneValue } from './extraction/kinds.js';
import { substituted } from './extraction/substitute.js';
import type { CandidateFact, Extraction, MemoryRecord, MemoryStore, ScoredMemory, Tenant } from './types.js';

/** What reconciling writes through: MemoryService's own operations, so each change is indexed and versioned as an API call's is. */
export interface MemoryWrites {
  search(tenant: Tenant, query: string, k: number): Promise<ScoredMemory[]>;
  create(
    tenant: Tenant,
    input: { content: string; slot?: string | null; vector?: Float32Array | undefined },
    source: 'conversation',
  ): Promise<MemoryRecord>;
  update(tenant: Tenant, id: string, change: { content: string }, source: 'conversation'): Promise<MemoryRecord>;
  delete(tenant: Tenant, id: string, source: 'conversation'): Promise<void>;
  /** The texts' embeddings (undefined without an embedder, or for a text with nothing the model reads). */
  vectors(texts: readonly string[]): Promise<Array<Float32Array | undefined>>;
}

/** Token overlap (Jaccard) at or above which a new fact repeats a stored one (measured on bench:memory's paraphrases). */
const DUPLICATE_OVERLAP = 0.8;
/** Share of a "forget …" request's words a memory must contain to be the one forgotten. */
const FORGET_OVERLAP = 0.6;
/** Similar memories compared with each candidate. */
const NEIGHBOURS = 5;
/**
 * Cosine (MiniLM) at or above which a changed fact of a kind of many values updates a memory of its slot.
 * Measured on pairs of facts: an update and what it updates 0.53–0.83 ("Emil is 4 now" / "son Emil is 3"
 * 0.73, "choir moved to Thursdays" / "choir on Tuesdays" 0.78, "on Pacific time now" / "timezone is CET"
 * 0.70); a new fact beside an old one of the same kind 0.25–0.58 ("now learning German" / "speaks French"
 * 0.58, "now has a dog" / "has two cats" 0.56). Above all of the second, below some of the first: a missed
 * update leaves two memories, a wrong one would lose a fact.
 */
const UPDATE_SIMILARITY = 0.6;
/** The same when the user said it corrects something ("switched", "actually", "sold", "no longer"). */
const UPDATE_SIMILARITY_CORRECTION = 0.5;

/**
 * How facts are compared: text/'s tokeniser with accents folded ("Köln" is "Koln", as the index reads it),
 * but without its English stop words or its stems. The English list drops words that tell two facts apart
 * ("not", "before"/"after", "was"), so "The user is not a morning person" would repeat "The user is a
 * morning person". Stems make forgetting, which deletes, reach too far: "forget that I'm allergic to peanut
 * butter" would delete "The user is allergic to peanuts". What is dropped instead is the frame every fact
 * shares ("The user's … is …").
 */
const FACT_WORDS: Analysis = {
  stem: false,
  stopWords: new Set(['the', 'user', 's', 'a', 'an', 'is', 'are', 'to', 'in', 'of', 'that', 'i', 'my', 'now']),
};
const NUMBER_WORD =
  /^(?:\d+|zero|no|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a|an|single|second|third|fourth|both|another|more)$/;

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

/** The same fact: the same words, or the new one's words all in the old one. */
function repeats(memory: MemoryRecord, fact: CandidateFact): boolean {
  const old = terms(memory.content);
  const fresh = terms(fact.content);
  return overlap(old, fresh) >= DUPLICATE_OVERLAP || covers(old, fresh) >= 1;
}

/** Two facts that differ only in a count ("has two cats" → "has three cats"): the count changed. */
function countChanged(memory: MemoryRecord, fact: CandidateFact): boolean {
  const old = terms(memory.content);
  const fresh = terms(fact.content);
  const differ = [...old].filter((t) => !fresh.has(t)).concat([...fresh].filter((t) => !old.has(t)));
  return differ.length > 0 && differ.every((t) => NUMBER_WORD.test(t)) && differ.some((t) => t !== 'a' && t !== 'an');
}

/**
 * The same attribute with another value ("favourite colour is crimson" → "… is lilac now"): two facts that
 * share at least two words and differ in at most two on each side. Taken only from a statement that says
 * something changed: meaning alone puts such pairs at 0.55 (MiniLM reads the values as the content).
 */
function valueChanged(memory: MemoryRecord, fact: CandidateFact): boolean {
  const old = terms(memory.content);
  const fresh = terms(fact.content);
  const shared = [...fresh].filter((t) => old.has(t)).length;
  return shared >= 2 && old.size - shared <= 2 && fresh.size - shared <= 2 && old.size > shared;
}

function mentions(content: string, value: string): boolean {
  const escaped = value.trim().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return escaped.length > 0 && new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'iu').test(content);
}

export type Decision =
  | { op: 'add'; fact: CandidateFact }
  | { op: 'update'; memory: MemoryRecord; fact: CandidateFact; content: string }
  | { op: 'delete'; memory: MemoryRecord }
  | { op: 'none'; fact: CandidateFact; reason: 'duplicate' };

/**
 * The memory a new fact supersedes, if any:
 * 1. a correction naming the old value ("…, not Tartu", "from VS Code to Neovim"): the memory that holds it,
 *    of the same slot first;
 * 2. a kind of one value (home, work, name, diet, …): the slot's memory;
 * 3. a kind of many (pets, languages, tools, …): the slot's memory whose count changed, or, for a fact
 *    that says something changed, the slot's memory closest in meaning if it is close enough.
 */
async function supersedes(
  memories: MemoryWrites,
  store: MemoryStore,
  tenant: Tenant,
  fact: CandidateFact,
  similar: readonly ScoredMemory[],
): Promise<{ memory: MemoryRecord; value?: string } | undefined> {
  const inSlot = fact.slot ? await store.inSlot(tenant, fact.slot) : [];
  for (const value of fact.correction?.replaces ?? []) {
    const nearby = [...inSlot, ...similar, ...(await memories.search(tenant, value, NEIGHBOURS))];
    const memory = nearby.find((m) => mentions(m.content, value));
    if (memory) return { memory, value };
  }
  if (fact.slot && holdsOneValue(fact.slot) && inSlot[0]) return { memory: inSlot[0] };
  const counted = inSlot.find((m) => countChanged(m, fact));
  if (counted) return { memory: counted };
  if (!fact.changed && !fact.correction) return undefined;
  const revalued = inSlot.find((m) => valueChanged(m, fact));
  if (revalued) return { memory: revalued };
  const candidates = new Map([...inSlot.slice(0, NEIGHBOURS), ...similar].map((m) => [m.id, m]));
  return closestInMeaning(memories, fact, [...candidates.values()]);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot;
}

/** The candidate closest in meaning to a changed fact, if close enough. */
async function closestInMeaning(
  memories: MemoryWrites,
  fact: CandidateFact,
  candidates: readonly MemoryRecord[],
): Promise<{ memory: MemoryRecord } | undefined> {
  if (candidates.length === 0) return undefined;
  const [factVector, ...vectors] = fact.vector
    ? [fact.vector, ...(await memories.vectors(candidates.map((m) => m.content)))]
    : await memories.vectors([fact.content, ...candidates.map((m) => m.content)]);
  if (!factVector) return undefined;
  let best: { memory: MemoryRecord; score: number } | undefined;
  candidates.forEach((memory, i) => {
    const vector = vectors[i];
    const score = vector ? cosine(factVector, vector) : 0;
    // By meaning alone, whatever kinds the model gave the two: it mistakes one kind for another (a work
    // schedule for work), and two facts this close are about the same thing whichever it is.
    const enough = fact.correction ? UPDATE_SIMILARITY_CORRECTION : UPDATE_SIMILARITY;
    if (score >= enough && score > (best?.score ?? 0)) best = { memory, score };
  });
  return best && { memory: best.memory };
}

/**
 * mem0's four operations, decided deterministically against the user's memories:
 * - **delete** what a "forget …" names (memories containing most of its words);
 * - **none** for a candidate that repeats a memory;
 * - **update** the memory a candidate supersedes (see `supersedes`): the old text stays in the memory's
 *   history with the time it changed;
 * - **add** otherwise.
 * Candidates are applied in order, so "I live in Lyon. Actually, I moved to Paris." ends with Paris. Running
 * the same extraction twice changes nothing the second time (a resumed job after a crash).
 */
export async function reconcile(
  memories: MemoryWrites,
  tenant: Tenant,
  extraction: Extraction,
  store: MemoryStore,
): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (const request of extraction.forget) {
    const wanted = terms(request.content);
    for (const m of await memories.search(tenant, request.content, NEIGHBOURS)) {
      if (covers(terms(m.content), wanted) < FORGET_OVERLAP) continue;
      await memories.delete(tenant, m.id, 'conversation');
      decisions.push({ op: 'delete', memory: m });
    }
  }
  for (const fact of extraction.facts) {
    const similar = await memories.search(tenant, fact.content, NEIGHBOURS);
    if (similar.some((m) => repeats(m, fact))) {
      decisions.push({ op: 'none', fact, reason: 'duplicate' });
      continue;
    }
    const target = await supersedes(memories, store, tenant, fact, similar);
    if (target) {
      const content = target.value ? substituted(target.memory.content, target.value, fact.content) : fact.content;
      if (content !== target.memory.content) {
        await memories.update(tenant, target.memory.id, { content }, 'conversation');
        decisions.push({ op: 'update', memory: target.memory, fact, content });
        continue;
      }
    }
    await memories.create(tenant, { content: fact.content, slot: fact.slot, vector: fact.vector }, 'conversation');
    decisions.push({ op: 'add', fact });
  }
  return decisions;
}
