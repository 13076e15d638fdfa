import type { Logger } from 'pino';
import type { AccountService, AccountStore } from './accounts/index.js';
import type { ResponseCache } from './cache/index.js';
import type { LocalModelSupervisor } from './chat/index.js';
import type { Clock } from './clock/index.js';
import type { Config } from './config/index.js';
import type { HttpPorts, Operations } from './http/index.js';
import type { RateLimiter } from './limits/index.js';
import type { FactExtractor, MemoryService } from './memory/index.js';
import type { Metrics } from './metrics/index.js';
import type { Router } from './providers/index.js';
import type { CodeRunner } from './sandbox/index.js';
import type { SlaService } from './sla/index.js';
import type { Db } from './storage/index.js';
import type { Lifecycle } from './system/index.js';
import type { BufferedUsageStore } from './usage/index.js';
import type { WebGrounding } from './web/index.js';

/** What compose() builds and what it may be given: the types a server, the CLI and the tests hold of a runtime. */
export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
  /** The memory extractor instead of the configured one (tests: one that throws or hangs). */
  memoryExtractor?: FactExtractor;
}

/**
 * Everything one process runs on, built once; `close()` stops it in dependency order, every part even when
 * one fails (the failures reported together, as an AggregateError).
 */
export interface Runtime {
  config: Config;
  clock: Clock;
  logger: Logger;
  db: Db;
  accounts: AccountService;
  /** The store behind `accounts` (tests count its look-ups). */
  accountStore: AccountStore;
  limiter: RateLimiter;
  usage: BufferedUsageStore;
  /** SLA buckets and reports (the dashboard's SLA page reads `sla.report`). */
  sla: SlaService;
  /** The Prometheus registry behind GET /metrics. */
  metrics: Metrics;
  router: Router;
  cache: ResponseCache;
  sandbox: CodeRunner;
  localModel: LocalModelSupervisor;
  /** Web grounding (search, guarded page fetching); `pvai doctor` checks its provider. */
  web: WebGrounding;
  /** The stop as requests see it: draining (readiness 503), then work in flight told to end. */
  lifecycle: Lifecycle;
  /** Memories per end user (tests look into its index). */
  memory: MemoryService;
  /** Every operation of the contract, by operationId. */
  operations: Operations;
  /** What the HTTP layer needs of the product. */
  ports: HttpPorts;
  close(): Promise<void>;
}
