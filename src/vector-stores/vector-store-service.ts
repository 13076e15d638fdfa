import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import type { FileRecord, FileService, ListPage } from '../files/index.js';
import type { AttributeFilter } from '../kernel/index.js';
import type { SqlStoreFiles } from './sql-store-files.js';
import type { SqlVectorStores } from './sql-vector-stores.js';
import { storeTenant } from './store-tenant.js';
import type {
  FileCounts,
  Owner,
  ReadFile,
  StoreDocuments,
  StoreFileRecord,
  StoreMatch,
  VectorStoreRecord,
} from './types.js';

const DAY_MS = 86_400_000;
/**
 * The largest file a store indexes: its bytes and text are read whole to extract it (a document upload's limit is
 * 24 MiB); larger files are stored and downloadable but `failed` in a store.
 */
const MAX_INDEXED_BYTES = 64 * 1024 * 1024;
/** How long a request extracting the file it attached holds it before the pump may take it up (it died). */
const EXTRACT_LEASE_MS = 5 * 60_000;
/** pvai's own window (documents' chunker), as a static strategy says it: ~180 tokens, ~30 back. */
export const AUTO_CHUNKING = { chars: 720, overlapChars: 120 };
/** Characters per token where a strategy is given in tokens (OpenAI's rule of thumb for English). */
export const CHARS_PER_TOKEN = 4;

export interface VectorStoreDeps {
  stores: SqlVectorStores;
  links: SqlStoreFiles;
  files: FileService;
  documents: StoreDocuments;
  readFile: ReadFile;
  clock: Clock;
}

export interface NewStore {
  owner: Owner;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  chunking: VectorStoreRecord['chunking'];
  expiresAfterDays: number | null;
}

export interface Attach {
  attributes: StoreFileRecord['attributes'];
  chunking: StoreFileRecord['chunking'] | null;
  batchId?: string | undefined;
}

export interface SearchHit {
  link: StoreFileRecord;
  chunkId: string;
  text: string;
  /** The fused score (documents' scale; `fusedRelevance` turns it into 0–1). */
  score: number;
  page: number | null;
  charStart: number;
  charEnd: number;
}

export function isExpired(store: VectorStoreRecord, now: number): boolean {
  return (
    store.expired || (store.expiresAfterDays !== null && now >= store.lastActiveAt + store.expiresAfterDays * DAY_MS)
  );
}

/**
 * Vector stores over pvai's one ingestion and retrieval engine: a file attached becomes a document of the store's
 * tenant (`storeTenant`), chunked, embedded and indexed by the documents' worker, searched by the documents'
 * hybrid search. What is the store's own: which files it holds (links), their attributes, its expiry.
 */
export class VectorStoreService {
  readonly #deps: VectorStoreDeps;
  #expiredSeen: () => void = () => undefined;

  constructor(deps: VectorStoreDeps) {
    this.#deps = deps;
  }

  /** Told when a request meets a store past its expiry that the sweep has not reached yet (it then runs at once). */
  onExpiredSeen(listener: () => void): void {
    this.#expiredSeen = listener;
  }

  async create(input: NewStore): Promise<VectorStoreRecord> {
    const now = this.#deps.clock();
    const store: VectorStoreRecord = {
      id: `vs_${randomBytes(12).toString('hex')}`,
      accountId: input.owner.accountId,
      userId: input.owner.userId,
      name: input.name,
      description: input.description,
      metadata: input.metadata,
      chunking: input.chunking,
      expiresAfterDays: input.expiresAfterDays,
      lastActiveAt: now,
      expired: false,
      createdAt: now,
    };
    await this.#deps.stores.insert(store);
    return store;
  }

  count(accountId: string): Promise<number> {
    return this.#deps.stores.count(accountId);
  }

  async get(viewer: Owner, id: string, field?: string): Promise<VectorStoreRecord> {
    const store = await this.#deps.stores.get(viewer, id);
    if (!store)
      throw new AppError('NOT_FOUND', `No vector store ${id}`, { vector_store_id: id, ...(field ? { field } : {}) });
    if (!store.expired && isExpired(store, this.#deps.clock())) this.#expiredSeen();
    return store;
  }

  /** The stores named for a search, each the viewer's and not expired (404 / 400 naming the field). */
  async usable(viewer: Owner, ids: readonly string[], field: string): Promise<VectorStoreRecord[]> {
    const stores: VectorStoreRecord[] = [];
    for (const [i, id] of ids.entries()) {
      const store = await this.get(viewer, id, `${field}[${i}]`);
      this.requireLive(store, `${field}[${i}]`);
      stores.push(store);
    }
    return stores;
  }

  async list(viewer: Owner, page: ListPage): Promise<VectorStoreRecord[]> {
    const cursorId = page.after ?? page.before;
    const cursor = cursorId === undefined ? undefined : await this.get(viewer, cursorId);
    return this.#deps.stores.list(viewer, page, cursor);
  }

  async update(
    store: VectorStoreRecord,
    change: { name?: string | null; metadata?: Record<string, string> | null; expiresAfterDays?: number | null },
  ): Promise<VectorStoreRecord> {
    const updated: VectorStoreRecord = {
      ...store,
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.metadata !== undefined ? { metadata: change.metadata ?? {} } : {}),
      ...(change.expiresAfterDays !== undefined ? { expiresAfterDays: change.expiresAfterDays } : {}),
      // A change is activity: it renews an expiry counted from the last use.
      lastActiveAt: Math.max(store.lastActiveAt, this.#deps.clock()),
    };
    await this.#deps.stores.update(updated);
    return updated;
  }

  /** Removes the store with every index entry of its files (the files stay). */
  async delete(store: VectorStoreRecord): Promise<void> {
    await this.#deps.stores.delete(store.id);
    await this.#deps.documents.forget(storeTenant(store.accountId, store.id));
  }

  /** The store's file counts and the bytes of the files it holds. */
  async usage(store: VectorStoreRecord, batchId?: string): Promise<{ counts: FileCounts; bytes: number }> {
    const counts: FileCounts = { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 };
    let bytes = 0;
    for (const link of await this.#deps.links.all(store.id, batchId)) {
      counts[link.status]++;
      counts.total++;
      bytes += link.bytes;
    }
    return { counts, bytes };
  }

  /**
   * Links the file and, with `extractNow`, extracts its text and stores it as the store's document before
   * answering (the documents' bounded wait then usually sees it indexed); without, the pump does it. A file the
   * store holds already is answered as it is.
   */
  async attach(store: VectorStoreRecord, file: FileRecord, how: Attach, extractNow: boolean): Promise<StoreFileRecord> {
    this.requireLive(store);
    const now = this.#deps.clock();
    const linked = await this.#deps.links.insert(
      {
        vectorStoreId: store.id,
        fileId: file.id,
        accountId: store.accountId,
        documentId: null,
        batchId: how.batchId ?? null,
        attributes: how.attributes,
        chunking: how.chunking ?? store.chunking ?? AUTO_CHUNKING,
        bytes: file.bytes,
        status: 'in_progress',
        lastError: null,
        filename: file.filename,
        createdAt: now,
      },
      extractNow ? now + EXTRACT_LEASE_MS : 0,
    );
    await this.#deps.stores.touch(store.id, now);
    if (linked && extractNow) await this.ingest(store.id, file.id, true);
    return this.link(store, file.id);
  }

  async link(store: VectorStoreRecord, fileId: string): Promise<StoreFileRecord> {
    const link = await this.#deps.links.get(store.id, fileId);
    if (!link) throw new AppError('NOT_FOUND', `No file ${fileId} in vector store ${store.id}`, { file_id: fileId });
    return link;
  }

  /**
   * Extracts a linked file's text into the store's document (a link still waiting for it). `waitForIndex`: the
   * attaching request waits, as a document upload does, for it to be indexed; the pump does not (the ingestion
   * worker then indexes a batch's files together).
   */
  async ingest(vectorStoreId: string, fileId: string, waitForIndex = false): Promise<void> {
    const { links, files, documents, readFile } = this.#deps;
    const link = await links.get(vectorStoreId, fileId);
    if (!link || link.documentId !== null || link.status !== 'in_progress') return;
    const owner = { accountId: link.accountId, userId: null };
    const file = await files.get(owner, fileId).catch(() => undefined);
    if (!file) {
      await links.setOutcome(vectorStoreId, fileId, 'failed', {
        code: 'invalid_file',
        message: 'The file was deleted',
      });
      return;
    }
    if (file.bytes > MAX_INDEXED_BYTES) {
      await links.setOutcome(vectorStoreId, fileId, 'failed', {
        code: 'unsupported_file',
        message: `Files over ${MAX_INDEXED_BYTES} bytes are stored but not indexed (their text is read whole)`,
      });
      return;
    }
    const tenant = storeTenant(link.accountId, vectorStoreId);
    let documentId: string;
    try {
      const input = await readFile(await files.bytes(file), file.filename, file.contentType, {
        title: file.filename,
        metadata: link.attributes,
      });
      documentId = (await documents.create(tenant, { ...input, chunking: link.chunking }, { waitMs: 0 })).id;
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      await links.setOutcome(vectorStoreId, fileId, 'failed', { code: 'invalid_file', message: err.message });
      return;
    }
    // Linked before any wait: a request that dies now leaves a link with its document, never one the pump
    // would extract a second time.
    await links.setDocument(vectorStoreId, fileId, documentId);
    // Detached (or the file deleted) while its text was read: its document must not outlive the link.
    if (!(await links.get(vectorStoreId, fileId))) {
      await documents.delete(tenant, documentId).catch(() => undefined);
      return;
    }
    if (waitForIndex) await documents.settled(tenant, documentId);
  }

  /** Removes the file from the store and its chunks from the index. */
  async detach(store: VectorStoreRecord, link: StoreFileRecord): Promise<void> {
    await this.#deps.links.delete(store.id, link.fileId);
    if (link.documentId) await this.dropDocument(store, link.documentId);
  }

  /** Removes one document of the store (a cancelled file's), whether or not it is still there. */
  async dropDocument(store: VectorStoreRecord, documentId: string): Promise<void> {
    await this.#deps.documents.delete(storeTenant(store.accountId, store.id), documentId).catch((err) => {
      if (!(err instanceof AppError && err.code === 'NOT_FOUND')) throw err;
    });
  }

  /** A file deleted: out of every store that holds it. */
  async fileDeleted(file: FileRecord): Promise<void> {
    for (const link of await this.#deps.links.ofFile(file.id)) {
      const store = await this.#deps.stores.get({ accountId: link.accountId, userId: null }, link.vectorStoreId);
      if (store) await this.detach(store, link);
    }
  }

  async setAttributes(
    store: VectorStoreRecord,
    link: StoreFileRecord,
    attributes: Attach['attributes'],
  ): Promise<void> {
    await this.#deps.links.setAttributes(store.id, link.fileId, attributes);
    if (link.documentId) {
      await this.#deps.documents.setMetadata(storeTenant(store.accountId, store.id), link.documentId, attributes);
    }
  }

  /** The file's text as the store searches it (results' spans point into it); empty while it is extracted. */
  async text(store: VectorStoreRecord, link: StoreFileRecord): Promise<string> {
    if (!link.documentId) return '';
    return this.#deps.documents.text(storeTenant(store.accountId, store.id), link.documentId).catch(() => '');
  }

  /**
   * The stores' best `k` chunks for the queries: each (store, query) searched by the documents' hybrid search,
   * the best score of a chunk kept, best first. Filters test the files' attributes (their documents' metadata).
   */
  async search(
    stores: readonly VectorStoreRecord[],
    queries: readonly string[],
    k: number,
    options: { filter?: AttributeFilter | undefined; minRelevance?: number | undefined; signal?: AbortSignal },
  ): Promise<SearchHit[]> {
    const now = this.#deps.clock();
    const best = new Map<string, { storeId: string; match: StoreMatch }>();
    for (const store of stores) {
      await this.#deps.stores.touch(store.id, now);
      for (const query of queries) {
        const tenant = storeTenant(store.accountId, store.id);
        for (const match of await this.#deps.documents.search(tenant, query, k, options.signal, options)) {
          const seen = best.get(match.id);
          if (!seen || seen.match.score < match.score) best.set(match.id, { storeId: store.id, match });
        }
      }
    }
    const ranked = [...best.values()].sort((a, b) => b.match.score - a.match.score).slice(0, k);
    const links = new Map(
      (await this.#deps.links.ofDocuments([...new Set(ranked.map((r) => r.match.documentId))])).map((l) => [
        l.documentId,
        l,
      ]),
    );
    return ranked.flatMap(({ match }) => {
      const link = links.get(match.documentId);
      if (!link) return [];
      return [
        {
          link,
          chunkId: match.id,
          text: match.text,
          score: match.score,
          page: match.page,
          charStart: match.charStart,
          charEnd: match.charEnd,
        },
      ];
    });
  }

  /** The viewer's named stores (404 / 400 naming `vector_store_ids[i]`), searched for one query. */
  async searchNamed(viewer: Owner, ids: readonly string[], query: string, k: number) {
    const hits = await this.search(await this.usable(viewer, ids, 'vector_store_ids'), [query], k, {});
    return hits.map((hit) => ({ ...hit, fileId: hit.link.fileId, filename: hit.link.filename }));
  }

  /** What changes whenever a search of these stores could answer differently (the chat cache key). */
  async version(stores: readonly VectorStoreRecord[]): Promise<string> {
    const versions = await Promise.all(stores.map((s) => this.#deps.documents.version(storeTenant(s.accountId, s.id))));
    return versions.join('.');
  }

  /** 400 VECTOR_STORE_EXPIRED for a store past its expiry. */
  /** 400 VECTOR_STORE_EXPIRED for a store past its expiry. */
  requireLive(store: VectorStoreRecord, field?: string): void {
    if (!isExpired(store, this.#deps.clock())) return;
    throw new AppError('VECTOR_STORE_EXPIRED', `The vector store ${store.id} has expired`, {
      vector_store_id: store.id,
      ...(field ? { field } : {}),
    });
  }
}
