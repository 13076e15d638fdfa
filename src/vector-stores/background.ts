import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import { TRACING, tracedJob } from '../tracing/index.js';
import type { SqlStoreFiles } from './sql-store-files.js';
import type { SqlVectorStores } from './sql-vector-stores.js';
import { storeTenant } from './store-tenant.js';
import type { StoreDocuments } from './types.js';
import type { VectorStoreService } from './vector-store-service.js';

/** How long one extraction may hold its link before another worker (a replica) takes it up. */
const LEASE_MS = 5 * 60_000;
/** How often links left by a crashed worker and stores past their expiry are looked for. */
const SWEEP_EVERY_MS = 30_000;

interface BackgroundDeps {
  service: VectorStoreService;
  links: SqlStoreFiles;
  stores: SqlVectorStores;
  documents: StoreDocuments;
  clock: Clock;
  log: Logger;
}

/**
 * The vector stores' work behind the requests: extracting the files of batches (and of attaches whose request
 * died), each leased so that any replica takes up what another left; and the expiry of stores, whose index
 * entries are removed once they are past `expires_after` (the store itself stays, `expired`).
 */
export class VectorStoreBackground {
  readonly #deps: BackgroundDeps;
  #running: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> | undefined;
  #closed = false;

  constructor(deps: BackgroundDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.kick();
      this.sweepSoon();
    }, SWEEP_EVERY_MS);
    this.#timer.unref();
    this.kick();
  }

  /** Extracts waiting links until none is left (one run at a time; a kick during a run runs it again). */
  kick(): void {
    if (this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#drain()
      .catch((err) => this.#deps.log.error({ err }, 'vector store file extraction failed'))
      .finally(() => {
        this.#running = undefined;
        if (this.#again && !this.#closed) {
          this.#again = false;
          this.kick();
        }
      });
  }

  async #drain(): Promise<void> {
    const { links, service, clock, log } = this.#deps;
    while (!this.#closed) {
      const link = await links.claimPending(clock(), LEASE_MS);
      if (!link) return;
      try {
        await (TRACING.on
          ? tracedJob(
              'vector store file ingestion',
              {
                'pvai.job': 'file_extraction',
                'pvai.vector_store_id': link.vectorStoreId,
                'pvai.file_id': link.fileId,
              },
              () => service.ingest(link.vectorStoreId, link.fileId),
            )
          : service.ingest(link.vectorStoreId, link.fileId));
      } catch (err) {
        log.error({ err, vector_store_id: link.vectorStoreId, file_id: link.fileId }, 'a vector store file failed');
        await links.setOutcome(link.vectorStoreId, link.fileId, 'failed', {
          code: 'server_error',
          message: 'The file could not be processed',
        });
      }
    }
  }

  /** Runs the expiry sweep now, behind the request that met an expired store (one sweep at a time). */
  sweepSoon(): void {
    if (this.#closed || this.#sweeping) return;
    this.#sweeping = this.sweepExpired()
      .catch((err) => this.#deps.log.error({ err }, 'vector store expiry sweep failed'))
      .finally(() => {
        this.#sweeping = undefined;
      });
  }

  /** Stores past their expiry lose their index entries (and say `expired` from then on). */
  async sweepExpired(): Promise<void> {
    const { stores, documents, clock } = this.#deps;
    for (const store of await stores.due(clock())) {
      await documents.forget(storeTenant(store.accountId, store.id));
      await stores.markExpired(store.id);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#running;
    await this.#sweeping;
  }
}
