import type { Account } from '../kernel/index.js';
import type { Db } from '../storage/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { slaOperations } from './operations.js';
import { SlaService, type SlaServiceOptions, type SlaWindow } from './sla-service.js';
import { SqlSlaStore } from './sql-sla-store.js';

/** SLA reports: each request's latency and outcome in hourly buckets per tier (written behind), `GET /z1/sla`. */
export function slaCapability({
  db,
  tiers,
  ...options
}: Omit<SlaServiceOptions, 'store' | 'targets'> & { db: Db; tiers: TierPolicy }) {
  const service = new SlaService({
    ...options,
    store: new SqlSlaStore(db),
    targets: (tier) => tiers.slaTargets({ tier }),
  });
  return {
    name: 'sla',
    service,
    operations: slaOperations({ sla: service, tiers }),
    endOfRequest: service.record.bind(service),
    /** The dashboard's SLA page: for the tiers that have SLA monitoring. */
    reports: {
      available: (account: Account) => tiers.rulesFor(account).slaEndpoint,
      report: (account: Account, window: SlaWindow) => service.report(account, window),
    },
    close: () => service.close(),
  };
}
