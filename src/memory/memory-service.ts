import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { type Chunk, type ChunkHit, type ChunkIndex, type Embedder, reciprocalRankFusion } from '../retrieval/index.js';
import { kindWords } from './extraction/kinds.js';
import type { ExtractionQueue } from './extraction-queue.js';
import { type ExtractionOptions, ExtractionWorker } from './extraction-worker.js';
import { reconcile } from './reconcile.js';
import type {
  FactExtractor,
  MemoryChange,
  MemoryRecord,
  MemorySource,
  MemoryStore,
  ScoredMemory,
  Tenant,
} from './types.js';

/** Cosine below which a memory is not offered to the chat by meaning (MiniLM, measured: a question and an unrelated fact ~0.05–0.2, a related one 0.4–0.5). */
const MIN_SIMILARITY = 0.25;
/** How often an erase looks again for the user's extraction a worker is running (it waits until it ended). */
const ERASE_POLL_MS = 25;

export interface MemoryServiceDeps {
  store: MemoryStore;
  /** The memories' own retrieval index (a separate namespace from documents). */
  index: ChunkIndex;
  embedder?: Embedder | undefined;
  extractor: FactExtractor;
  /** The durable queue of turns to extract (in the service's database, shared by replicas). */
  queue: ExtractionQueue;
  /** This process alone writes the database (SQLite owner): extraction leases of a previous run are void. */
  soleWorker: boolean;
  clock: Clock;
  logger: Logger;
  extraction?: Partial<ExtractionOptions> | undefined;
}

/** A memory as one indexed chunk: the whole memory is its only chunk, with the memory's id. */
/**
 * A memory as one indexed chunk: the whole memory is its only chunk, with the memory's id. Its words are the
 * content's and its kind's (`kindWords`), so "Which city do I live in?" finds "The user moved to Paris last
 * year." by "city" and "live"; its vector is the content's alone.
 */
function asChunk(m: Pick<MemoryRecord, 'id' | 'content' | 'slot'>): Chunk {
  const words = m.slot ? kindWords(m.slot) : '';
  return {
    id: m.id,
    documentId: m.id,
    ordinal: 0,
    text: words ? `${m.content} ${words}` : m.content,
    charStart: 0,
    charEnd: m.content.length,
    page: null,
  };
}

/**
 * Memories per (account, user): the store is the truth, the index makes them findable. Every read and
 * write is scoped by the tenant (the account from the API key and the request's user_id), never by
 * similarity alone. Facts from conversations are extracted after the answer, off the request path: the
 * turn is queued durably before its answer goes out, and the extraction worker (`extraction-worker.ts`)
 * takes each user's turns one at a time, in order (so two answers of one user never race on a fact).
 */
export class MemoryService {
  readonly #deps: MemoryServiceDeps;
  readonly #worker: ExtractionWorker;
  #closed = false;

  constructor(deps: MemoryServiceDeps) {
    this.#deps = deps;
    this.#worker = new ExtractionWorker({
      queue: deps.queue,
      extractor: deps.extractor,
      apply: async (tenant, extraction) => {
        await reconcile(this, tenant, extraction, deps.store);
      },
      clock: deps.clock,
      logger: deps.logger,
      soleWorker: deps.soleWorker,
      options: deps.extraction,
    });
  }

  /** The extractor the worker runs (benchmarks time it alone). */
  get extractor(): FactExtractor {
    return this.#deps.extractor;
  }

  async start(): Promise<void> {
    const { embedder, index } = this.#deps;
    await index.prepare(embedder ? { id: embedder.id, dimension: await embedder.dimension() } : undefined);
    await this.#worker.start();
  }

  async create(
    tenant: Tenant,
    input: {
      content: string;
      metadata?: Record<string, unknown> | undefined;
      slot?: string | null;
      /** The content's embedding when the caller has it (the extractor computed it): not computed again. */
      vector?: Float32Array | undefined;
    },
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
    const vector = input.vector ?? (await this.#embed(memory.content));
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
      await this.#index(
        tenant,
        { id, content: change.content, slot: change.slot === undefined ? before.slot : change.slot },
        vector,
      );
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

  /**
   * Forgets the user: their queued extractions, then every memory, its history and its vectors. An
   * extraction some worker (of any replica) is running for the user is waited for first (bounded by its
   * lease), so nothing it writes outlives the erase. Returns how many memories there were.
   */
  async forget(tenant: Tenant): Promise<number> {
    const { queue, clock } = this.#deps;
    while ((await queue.dropTenant(tenant, clock())).leased > 0) {
      await new Promise((resolve) => setTimeout(resolve, ERASE_POLL_MS));
    }
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
   * After an answer, before it goes out: the user's turn, when it may state a fact (the extractor's cheap
   * first look), is queued durably for extraction, which runs behind. Resolves once the turn is stored; a
   * crash after that loses none of its facts.
   */
  async observe(tenant: Tenant, turn: string): Promise<void> {
    if (this.#closed || !turn.trim()) return;
    const { extractor } = this.#deps;
    if (extractor.mayState && !extractor.mayState(turn)) return;
    await this.#deps.queue.enqueue(tenant, turn, this.#deps.clock());
    this.#worker.kick();
  }

  /** Resolves when every queued extraction is through (benchmarks, tests). */
  settled(): Promise<void> {
    return this.#worker.settled();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#worker.close();
    await this.#deps.index.close();
  }

  /** The texts' vectors (reconciliation compares facts by meaning); none without an embedder. */
  async vectors(texts: readonly string[]): Promise<Array<Float32Array | undefined>> {
    const { embedder } = this.#deps;
    return embedder && texts.length > 0 ? embedder.embed([...texts]) : texts.map(() => undefined);
  }

  /** The content's vector; undefined without an embedder, or for text with nothing the model reads. */
  async #embed(content: string): Promise<Float32Array | undefined> {
    const { embedder } = this.#deps;
    return embedder ? (await embedder.embed([content]))[0] : undefined;
  }

  /** Findable by its words, and by meaning when it has a vector (a memory of no words is listed, not found). */
  async #index(
    tenant: Tenant,
    memory: Pick<MemoryRecord, 'id' | 'content' | 'slot'>,
    vector: Float32Array | undefined,
  ) {
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
