import type { Logger } from 'pino';
import { systemClock } from '../clock/index.js';
import type { Config } from '../config/index.js';
import { chunkIndexFor, createEmbedder, SqlChunkIndex } from '../retrieval/index.js';
import { openDb } from '../storage/index.js';
import { closeInOrder } from '../system/index.js';
import { DocumentService } from './document-service.js';
import { SqlDocumentStore } from './sql-document-store.js';

/**
 * The documents capability alone on the service's storage, for `pvai documents`: a worker like the server's (it
 * takes this command's jobs and any other unleased ones), on the server's index (Qdrant when QDRANT_URL is set), so
 * what is added here is found there. Only `add` embeds; `list` and `rm` need not load the model.
 */
export async function withDocuments<T>(
  config: Config,
  options: { embed: boolean; logger: Logger },
  fn: (documents: DocumentService) => Promise<T>,
): Promise<T> {
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  const index = chunkIndexFor(
    config,
    () => new SqlChunkIndex(db),
    (message) => options.logger.warn(message),
  );
  const embedder = options.embed ? createEmbedder(config, options.logger) : undefined;
  const documents = new DocumentService({
    store: new SqlDocumentStore(db),
    index,
    embedder,
    clock: systemClock,
    logger: options.logger,
    soleWorker: false,
    readyWaitMs: 0,
  });
  try {
    await documents.start();
    return await fn(documents);
  } finally {
    await closeInOrder([
      { name: 'documents', close: () => documents.close() },
      { name: 'embedder', close: () => embedder?.close() },
      { name: 'index', close: () => index.close() },
      { name: 'db', close: () => db.close() },
    ]);
  }
}
