import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import type { FileService } from '../files/index.js';
import type { Db } from '../storage/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { VectorStoreBackground } from './background.js';
import { vectorStoresContextSource } from './context-source.js';
import { storeFileOperations } from './file-operations.js';
import { SqlStoreFiles } from './sql-store-files.js';
import { SqlVectorStores } from './sql-vector-stores.js';
import { storeOperations } from './store-operations.js';
import type { ReadFile, StoreDocuments } from './types.js';
import { vectorStoresUserData } from './user-data.js';
import { VectorStoreService } from './vector-store-service.js';

/**
 * OpenAI's Vector Stores API over the documents' ingestion and retrieval: its operations, chat's
 * `vector_store_ids` context, the end user's section, and the work behind (batches, expiry). A file deleted
 * through the Files API leaves every store first.
 */
export function vectorStoresCapability(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  tiers: TierPolicy;
  files: FileService;
  documents: StoreDocuments;
  readFile: ReadFile;
}) {
  const storeRows = new SqlVectorStores(deps.db);
  const links = new SqlStoreFiles(deps.db);
  const service = new VectorStoreService({
    stores: storeRows,
    links,
    files: deps.files,
    documents: deps.documents,
    readFile: deps.readFile,
    clock: deps.clock,
  });
  const background = new VectorStoreBackground({
    service,
    links,
    stores: storeRows,
    documents: deps.documents,
    clock: deps.clock,
    log: deps.logger,
  });
  deps.files.onDelete((file) => service.fileDeleted(file));
  service.onExpiredSeen(() => background.sweepSoon());
  const shared = { stores: service, files: deps.files, background, clock: deps.clock };
  return {
    name: 'vector_stores',
    service,
    operations: {
      ...storeOperations({ ...shared, tiers: deps.tiers }),
      ...storeFileOperations({ ...shared, links, storeRows }),
    },
    context: vectorStoresContextSource(service),
    userData: vectorStoresUserData(service, storeRows, deps.clock),
    start: async () => background.start(),
    close: () => background.close(),
  };
}
