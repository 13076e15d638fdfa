import type { Tenant } from '../retrieval/index.js';

export type { Tenant };

export type MemorySource = 'api' | 'conversation';

export interface MemoryRecord extends Tenant {
  id: string;
  content: string;
  metadata: Record<string, unknown>;
  source: MemorySource;
  /**
   * What the memory is about when only one value can be true at a time (`name`, `location`,
   * `my:birthday`, …): a new fact with the same slot supersedes it instead of standing beside it.
   */
  slot: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface MemoryChange {
  event: 'add' | 'update' | 'delete';
  content: string;
  previousContent: string | null;
  source: MemorySource;
  at: number;
}

/** Memories and their history per (account, user). Every call is scoped by both; ids of others are misses. */
export interface MemoryStore {
  insert(memory: MemoryRecord): Promise<void>;
  get(tenant: Tenant, id: string): Promise<MemoryRecord | undefined>;
  /** Newest first. */
  list(tenant: Tenant): Promise<MemoryRecord[]>;
  many(tenant: Tenant, ids: readonly string[]): Promise<MemoryRecord[]>;
  /** The memories of a slot, newest first. */
  inSlot(tenant: Tenant, slot: string): Promise<MemoryRecord[]>;
  /** Changes content and/or metadata and records what it said before; undefined when not the tenant's. */
  update(
    tenant: Tenant,
    id: string,
    change: { content?: string; metadata?: Record<string, unknown>; slot?: string | null },
    source: MemorySource,
    at: number,
  ): Promise<MemoryRecord | undefined>;
  /** Deletes the memory; its history keeps the deletion. False when not the tenant's. */
  delete(tenant: Tenant, id: string, source: MemorySource, at: number): Promise<boolean>;
  /** Forgets the user: every memory, every history row and the version. Returns how many memories. */
  deleteTenant(tenant: Tenant): Promise<number>;
  history(tenant: Tenant, id: string): Promise<MemoryChange[]>;
  /** Changes with every change of the user's memories; `0` when they have none. */
  version(tenant: Tenant): Promise<string>;
  bumpVersion(tenant: Tenant): Promise<void>;
}

/** A fact a user stated about themselves, in the third person, ready to store. */
export interface CandidateFact {
  content: string;
  /**
   * What the fact is about (a kind: `home`, `work`, `pets`, …, see extraction/kinds.ts). For a kind that
   * holds one value at a time a new fact of the slot supersedes the memory holding it; for the others it
   * narrows what a correction may supersede.
   */
  slot: string | null;
  /**
   * The statement corrects an earlier one ("Actually…", "not anymore", "switched to"); `replaces` holds the
   * old value when the user named it ("…, not Tartu", "from VS Code to Neovim").
   */
  correction?: { replaces: string[] } | undefined;
  /**
   * The statement says something changed ("Emil is 4 now", "choir moved to Thursdays"): of a kind of many
   * values, it supersedes the memory of its slot closest in meaning, when that one is close enough.
   */
  changed?: boolean | undefined;

  /** The content's embedding, when the extractor computed it: stored with the memory, not computed again. */
  vector?: Float32Array | undefined;
}

export interface Extraction {
  facts: CandidateFact[];
  /** What the user asked to forget ("forget that I live in Lyon"): matched against their memories. */
  forget: CandidateFact[];
}

/** Turns a user's chat turns into candidate facts: the statement classifier by default, a model when configured. */
export interface FactExtractor {
  readonly name: string;
  extract(userTurns: readonly string[], signal: AbortSignal): Promise<Extraction>;
  /**
   * A first look, in microseconds, on the request path: false when the turn cannot state a fact (no first
   * person, no instruction about answers, no correction), so it is not queued at all.
   */
  mayState?(turn: string): boolean;
}

/** A memory found by a search, with its fused score (higher is better). */
export interface ScoredMemory extends MemoryRecord {
  score: number;
}
