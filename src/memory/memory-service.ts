import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { untilAborted } from '../kernel/index.js';
import { type Chunk, type ChunkHit, type ChunkIndex, type Embedder, reciprocalRankFusion } from '../retrieval/index.js';
import { reconcile } from './reconcile.js';
import type {
  Extraction,
  FactExtractor,
  MemoryChange,
  MemoryRecord,
  MemorySource,
  MemoryStore,
  ScoredMemory,
  Tenant,
} from './types.js';

/** Cosine below which a memory is not offered to the chat by meaning (MiniLM, measured: a question and an unrelated fact ~0.05–0.2, a related one 0.4–0.5). */
export const MIN_SIMILARITY = 0.25;
/** How long one extraction may run after an answer before it is abandoned (it never delays the answer). */
export const EXTRACTION_TIMEOUT_MS = 10_000;
/** Extractions waiting at most; more are dropped with a warning rather than growing without bound. */
const MAX_PENDING = 1000;

export interface MemoryServiceDeps {
  store: MemoryStore;
  /** The memories' own retrieval index (a separate namespace from documents). */
  index: ChunkIndex;
  embedder?: Embedder | undefined;
  extractor: FactExtractor;
  clock: Clock;
  logger: Logger;
  extractionTimeoutMs?: number;
}

/** A memory as one indexed chunk: the whole memory is its only chunk, with the memory's id. */
function asChunk(m: Pick<MemoryRecord, 'id' | 'content'>): Chunk {
  return {
    id: m.id,
    documentId: m.id,
    ordinal: 0,
    text: m.content,
    charStart: 0,
    charEnd: m.content.length,
    page: null,
  };
}

/**
 * Memories per (account, user): the store is the truth, the index makes them findable. Every read and
 * write is scoped by the tenant (the account from the API key and the request's user_id), never by
 * similarity alone. Facts from conversations are extracted after the answer, off the request path, one
 * tenant at a time (so two answers of one user never race on the same fact).
 */
export class MemoryService {
  readonly #deps: MemoryServiceDeps;
  readonly #queues = new Map<string, Promise<void>>();
  #pending = 0;
  #closed = false;
  readonly #abort = new AbortController();

  constructor(deps: MemoryServiceDeps) {
    this.#deps = deps;
  }

  async start(): Promise<void> {
    const { embedder, index } = this.#deps;
    await index.prepare(embedder ? { id: embedder.id, dimension: await embedder.dimension() } : undefined);
  }

  async create(
    tenant: Tenant,
    input: { content: string; metadata?: Record<string, unknown> | undefined; slot?: string | null },
    source: MemorySource = 'api',
  ): Promise<MemoryRecord> {
    const now = this.#deps.clock();
    const memory: MemoryRecord = {
      id: `mem_${randomBytes(12).toString('hex')}`,
      ...tenant,
      content: input.content,
      metadata: input.metadata ?? {},
      source,
      slot: input.slot ?? null,
      createdAt: now,
      updatedAt: now,
    };
    // All or nothing: embedded before anything is written (a failing embedder leaves nothing behind), indexed
    // before the row is stored (an index entry without its row is never returned: search reads the rows by
    // id), and taken out of the index again if the row cannot be stored, so a client's retry makes one.
    const vector = await this.#embed(memory.content);
    // Bumped before (a crash after the insert must not leave version 0, which chat reads as "no
    // memories") and after (an answer cached while the memory was being written is not kept for it).
    await this.#deps.store.bumpVersion(tenant);
    await this.#index(tenant, memory, vector);
    try {
      await this.#deps.store.insert(memory);
    } catch (err) {
      await this.#unindex(tenant, memory.id);
      throw err;
    }
    await this.#deps.store.bumpVersion(tenant);
    return memory;
  }

  list(tenant: Tenant): Promise<MemoryRecord[]> {
    return this.#deps.store.list(tenant);
  }

  async update(
    tenant: Tenant,
    id: string,
    change: { content?: string | undefined; metadata?: Record<string, unknown> | undefined; slot?: string | null },
    source: MemorySource = 'api',
  ): Promise<MemoryRecord> {
    const patch = {
      ...(change.content !== undefined ? { content: change.content } : {}),
      ...(change.metadata !== undefined ? { metadata: change.metadata } : {}),
      ...(change.slot !== undefined ? { slot: change.slot } : {}),
    };
    if (change.content === undefined) {
      const after = await this.#deps.store.update(tenant, id, patch, source, this.#deps.clock());
      if (!after) throw new AppError('NOT_FOUND', `No memory ${id}`);
      await this.#deps.store.bumpVersion(tenant);
      return after;
    }
    // New content, all or nothing as in create: embedded first, then indexed, then stored; a failure after
    // the index changed puts the memory's previous content back into it, so the store and the index agree.
    const before = await this.#deps.store.get(tenant, id);
    if (!before) throw new AppError('NOT_FOUND', `No memory ${id}`);
    const vector = await this.#embed(change.content);
    let after: MemoryRecord | undefined;
    try {
      await this.#index(tenant, { id, content: change.content }, vector);
      after = await this.#deps.store.update(tenant, id, patch, source, this.#deps.clock());
    } catch (err) {
      await this.#reindex(tenant, before);
      throw err;
    }
    if (!after) {
      // Deleted meanwhile: its index entry goes with it.
      await this.#unindex(tenant, id);
      throw new AppError('NOT_FOUND', `No memory ${id}`);
    }
    await this.#deps.store.bumpVersion(tenant);
    return after;
  }

  async delete(tenant: Tenant, id: string, source: MemorySource = 'api'): Promise<void> {
    if (!(await this.#deps.store.delete(tenant, id, source, this.#deps.clock()))) {
      throw new AppError('NOT_FOUND', `No memory ${id}`);
    }
    await this.#deps.index.deleteDocument(tenant, id);
    await this.#deps.store.bumpVersion(tenant);
  }

  /** Forgets the user: every memory, its history and its vectors. Returns how many memories there were. */
  async forget(tenant: Tenant): Promise<number> {
    await this.#deps.index.deleteTenant(tenant);
    return this.#deps.store.deleteTenant(tenant);
  }

  async history(tenant: Tenant, id: string): Promise<MemoryChange[]> {
    const changes = await this.#deps.store.history(tenant, id);
    if (changes.length === 0) throw new AppError('NOT_FOUND', `No memory ${id}`);
    return changes;
  }

  version(tenant: Tenant): Promise<string> {
    return this.#deps.store.version(tenant);
  }

  /**
   * The tenant's memories for a query, best first: lexical and dense rankings fused. With `floor`,
   * only memories that share a word with the query or are close in meaning (cosine ≥ MIN_SIMILARITY; dense scores of every ChunkIndex adapter are cosines):
   * the chat should not be told unrelated facts just because the user has some.
   */
  async search(
    tenant: Tenant,
    query: string,
    k: number,
    options: { floor?: boolean; signal?: AbortSignal } = {},
  ): Promise<ScoredMemory[]> {
    const { index, embedder, store } = this.#deps;
    // The query is embedded on node-llama-cpp's thread while the lexical half runs on this one.
    const embedding = embedder?.embed([query], options.signal);
    embedding?.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
    let hits: ChunkHit[];
    if (options.floor) {
      // The two rankings apart, so the floor can be applied to the cosine before they are fused.
      const lexical = await index.search(tenant, { text: query, k, mode: 'lexical' });
      const vector = (await embedding)?.[0];
      const dense = vector ? await index.search(tenant, { text: query, vector, k, mode: 'dense' }) : [];
      hits = reciprocalRankFusion([lexical, dense.filter((h) => h.score >= MIN_SIMILARITY)]).slice(0, k);
    } else {
      const vector = (await embedding)?.[0];
      hits = await index.search(tenant, { text: query, vector, k, mode: 'hybrid' });
    }
    const byId = new Map(
      (
        await store.many(
          tenant,
          hits.map((h) => h.chunkId),
        )
      ).map((m) => [m.id, m]),
    );
    return hits.flatMap((h) => {
      const memory = byId.get(h.chunkId);
      return memory ? [{ ...memory, score: h.score }] : [];
    });
  }

  /**
   * After an answer: extract facts from the user's turns and reconcile them with the user's memories.
   * Returns at once; the work runs behind, one tenant at a time, bounded in time, and never throws.
   * The returned promise (settled when this tenant's queue is through it) exists for tests and close().
   */
  observe(tenant: Tenant, userTurns: readonly string[]): Promise<void> {
    if (this.#closed || userTurns.length === 0) return Promise.resolve();
    if (this.#pending >= MAX_PENDING) {
      this.#deps.logger.warn({ pending: this.#pending }, 'memory extraction queue full; a turn was not observed');
      return Promise.resolve();
    }
    const key = JSON.stringify([tenant.accountId, tenant.userId]);
    this.#pending++;
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const next = previous
      .then(() => this.#extract(tenant, userTurns))
      .catch((err: unknown) => this.#deps.logger.warn({ err }, 'memory extraction failed; the answer was not affected'))
      .finally(() => {
        this.#pending--;
        if (this.#queues.get(key) === next) this.#queues.delete(key);
      });
    this.#queues.set(key, next);
    return next;
  }

  /** Resolves when every extraction queued so far is through (benchmarks, tests, a clean stop). */
  async settled(): Promise<void> {
    while (this.#queues.size > 0) await Promise.allSettled([...this.#queues.values()]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    await Promise.allSettled([...this.#queues.values()]);
    await this.#deps.index.close();
  }

  /**
   * One extraction, after the answer went out (setImmediate: the response is written by then, even
   * for an extractor whose work is synchronous), then reconciled with the user's memories.
   */
  async #extract(tenant: Tenant, userTurns: readonly string[]): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.#abort.signal.aborted) return; // closed while this one waited its turn
    const { extractor } = this.#deps;
    const extraction = extractor.extractNow ? extractor.extractNow(userTurns) : await this.#extractBounded(userTurns);
    if (!extraction || this.#abort.signal.aborted) return;
    await reconcile(this, tenant, extraction, this.#deps.store);
  }

  /**
   * An asynchronous extractor (a model), bounded in time and stopped by close(); undefined when it was.
   * One cleared timer and one listener, not AbortSignal.timeout + AbortSignal.any: those keep a 10 s
   * timer and a composite signal alive per chat request (20,000 of each at 2,000 req/s).
   */
  async #extractBounded(userTurns: readonly string[]): Promise<Extraction | undefined> {
    const controller = new AbortController();
    const { signal } = controller;
    const onClose = () => controller.abort(this.#abort.signal.reason);
    this.#abort.signal.addEventListener('abort', onClose, { once: true });
    let timer: NodeJS.Timeout | undefined;
    try {
      timer = setTimeout(
        () => controller.abort(new DOMException('memory extraction timed out', 'TimeoutError')),
        this.#deps.extractionTimeoutMs ?? EXTRACTION_TIMEOUT_MS,
      );
      // An extractor that hangs and ignores its signal is abandoned all the same.
      const extraction = await untilAborted(this.#deps.extractor.extract(userTurns, signal), signal);
      return signal.aborted ? undefined : extraction;
    } finally {
      clearTimeout(timer);
      this.#abort.signal.removeEventListener('abort', onClose);
    }
  }

  /** The content's vector; undefined without an embedder, or for text with nothing the model reads. */
  async #embed(content: string): Promise<Float32Array | undefined> {
    const { embedder } = this.#deps;
    return embedder ? (await embedder.embed([content]))[0] : undefined;
  }

  /** Findable by its words, and by meaning when it has a vector (a memory of no words is listed, not found). */
  async #index(tenant: Tenant, memory: Pick<MemoryRecord, 'id' | 'content'>, vector: Float32Array | undefined) {
    const { index } = this.#deps;
    await index.putChunks(tenant, memory.id, [asChunk(memory)]);
    if (vector) await index.putVectors(tenant, memory.id, [{ chunkId: memory.id, vector }]);
  }

  /** Undoes an index write whose row was not stored; logged, not thrown, so the first error is the answer. */
  async #unindex(tenant: Tenant, id: string): Promise<void> {
    await this.#deps.index
      .deleteDocument(tenant, id)
      .catch((err: unknown) =>
        this.#deps.logger.error({ err, memory_id: id }, 'removing a memory from the index failed'),
      );
  }

  /** Puts a memory's stored content back into the index after a failed change (logged, not thrown). */
  async #reindex(tenant: Tenant, memory: MemoryRecord): Promise<void> {
    try {
      await this.#index(tenant, memory, await this.#embed(memory.content));
    } catch (err) {
      this.#deps.logger.error({ err, memory_id: memory.id }, 'restoring a memory in the index failed');
    }
  }
}
