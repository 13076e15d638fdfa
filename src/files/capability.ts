import type { Clock } from '../clock/index.js';
import type { Db } from '../storage/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { FileService } from './file-service.js';
import { fileOperations } from './operations.js';
import { SqlFileStore } from './sql-file-store.js';
import { filesUserData } from './user-data.js';

/** OpenAI's Files API on the service's database: uploads streamed in under the tier's caps, downloads streamed out. */
export function filesCapability(deps: { db: Db; clock: Clock; tiers: TierPolicy }) {
  const service = new FileService({ store: new SqlFileStore(deps.db), clock: deps.clock });
  return {
    name: 'files',
    service,
    operations: fileOperations(service, deps.tiers),
    userData: filesUserData(service),
    start: () => service.start(),
    close: () => service.close(),
  };
}
