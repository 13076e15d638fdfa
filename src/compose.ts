import type { Logger } from 'pino';
import { pino } from 'pino';
import { AccountService, type AccountStore, adminOperations, createAccountStore } from './accounts/index.js';
import { createMemoryCache, createPostgresCache, type ResponseCache } from './cache/index.js';
import { ChatService, ContextRegistry, chatOperations, LocalModelSupervisor, routeBudget } from './chat/index.js';
import { type Clock, systemClock } from './clock/index.js';
import { codeOperations } from './code/index.js';
import type { Config, TargetConfig } from './config/index.js';
import { DASHBOARD_PATH, dashboardRoutes, SessionStore } from './dashboard/index.js';
import { EmbeddingService, embeddingOperations } from './embeddings/index.js';
import { type HttpPorts, loadContract, type Operations } from './http/index.js';
import { EMBEDDING_MODEL_ID, MODEL_IDS } from './kernel/index.js';
import {
  ApiAdmission,
  createAuthFailureLimiter,
  createRateLimitStore,
  RateLimiter,
  storedSignInThrottle,
} from './limits/index.js';
import {
  type FactExtractor,
  LlmExtractor,
  MemoryService,
  memoryContextSource,
  memoryKindOf,
  memoryOperations,
  RuleBasedExtractor,
  SqlMemoryStore,
} from './memory/index.js';
import { Metrics, metricsOperations } from './metrics/index.js';
import { creditsPerRequest, embeddingCredits, modelOperations } from './models/index.js';
import { createProviderFactories, createRouter, type Router, type Target } from './providers/index.js';
import { RagService, ragContextSource, ragOperations, SqlDocumentStore } from './rag/index.js';
import { chunkIndexFor, createEmbedder, SqlChunkIndex } from './retrieval/index.js';
import { type CodeRunner, countingExecutions, createSandbox } from './sandbox/index.js';
import { LATENCY_BOUNDS_MS, SlaService, SqlSlaStore, slaOperations } from './sla/index.js';
import { checkDatabase, type Db, openDb } from './storage/index.js';
import { closeInOrder, Lifecycle, systemOperations } from './system/index.js';
import { TierPolicy } from './tiers/index.js';
import {
  BufferedUsageStore,
  DailyUsageRollup,
  SqlUsageStore,
  type UsageStore,
  usageOperations,
} from './usage/index.js';
import { createWebGrounding, type WebGrounding, webContextSource } from './web/index.js';

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
  usage: UsageStore;
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

/** The window `/z1/models` reports for an embedding upstream that states none: OpenAI's embedding models' (8191). */
const DEFAULT_UPSTREAM_EMBEDDING_CONTEXT = 8191;

/** Config targets → router targets; `apiKeyEnv` reads the upstream key from the environment. */
function toTarget(target: TargetConfig, env: NodeJS.ProcessEnv): Target {
  if (target.provider === 'local') return { ...target };
  const { apiKeyEnv, ...rest } = target;
  const apiKey = rest.apiKey ?? (apiKeyEnv ? env[apiKeyEnv] : undefined);
  return { ...rest, ...(apiKey ? { apiKey } : {}) };
}

/** The rules by default; a model through the router when `memory.extractionModel` is configured. */
function memoryExtractor(config: Config, router: Router): FactExtractor {
  const model = config.memory.extractionModel;
  if (!model) return new RuleBasedExtractor();
  return new LlmExtractor({ model, generate: (m, request, signal) => router.generate(m, request, signal) });
}

/**
 * The composition root: storage adapters and engines chosen by configuration, then every capability
 * on top, then their operations. Adding a capability is its folder plus a line in `operations` below.
 */
export async function compose(config: Config, options: ServiceOptions = {}): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger =
    options.logger ??
    pino({ level: config.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] });
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, owner: true });
  // The chat engines: the service's local model (found here, loaded by localModel.start below) and the
  // upstreams, behind the router. Nothing runs until a request (or the start) asks.
  const localModel = new LocalModelSupervisor(config, logger);
  const factories = createProviderFactories({
    localEngine: config.localEngine,
    resolveLocalModelPath: () => localModel.modelPath,
  });
  const router = createRouter(
    Object.fromEntries(
      Object.entries(config.routing).map(([model, list]) => [model, list.map((t) => toTarget(t, process.env))]),
    ),
    factories,
  );
  // One embedding model for documents, memories and web passage ranking (RagService closes it), and one
  // index for documents and memories (memories as their own kind).
  const embedder = createEmbedder(config, logger);
  // Qdrant when QDRANT_URL is set, else the embedded default: retrieval in the service's own database.
  const index = chunkIndexFor(
    config,
    () =>
      new SqlChunkIndex(db, {
        onError: (err) => logger.warn({ err }, 'refreshing the document index statistics failed'),
      }),
  );
  const rag = new RagService({
    store: new SqlDocumentStore(db),
    index,
    embedder,
    clock,
    logger,
    soleWorker: db.dialect === 'sqlite' && db.owned,
  });
  const memory = new MemoryService({
    store: new SqlMemoryStore(db),
    index: memoryKindOf(index),
    embedder,
    extractor: options.memoryExtractor ?? memoryExtractor(config, router),
    clock,
    logger,
  });
  try {
    // First, with only the database open: an index built with another embedding model stops the start here.
    await rag.start();
    await memory.start();
  } catch (err) {
    await closeInOrder([
      { name: 'memory', close: () => memory.close() },
      { name: 'rag', close: () => rag.close() },
      { name: 'router', close: () => router.close() },
      { name: 'db', close: () => db.close() },
    ]).catch((closing: unknown) => logger.error({ err: closing }, 'closing after a failed start failed'));
    throw err;
  }
  const accountStore = createAccountStore(db, {
    onError: (err) => logger.error({ err }, 'writing credit charges failed'),
  });
  const accounts = new AccountService(accountStore, clock, { authCacheTtlMs: config.authCacheTtlMs });
  const tiers = new TierPolicy(config.tiers);
  const limiter = new RateLimiter(
    createRateLimitStore(db, { onError: (err) => logger.error({ err }, 'writing rate-limit windows failed') }),
    clock,
  );
  const authFailures = createAuthFailureLimiter(db, config.authFailuresPerMinute, clock);
  // The dashboard's charts read the daily rollup that SqlUsageStore keeps as it writes usage rows.
  const usageRollup = new DailyUsageRollup(db);
  const usage = new BufferedUsageStore(new SqlUsageStore(db), {
    onError: (err, lost) => logger.error({ err, lost }, 'writing usage rows failed'),
  });

  await localModel.start(factories);
  const cache =
    db.dialect === 'postgres'
      ? createPostgresCache((sql, params) => db.pool.query(sql, params), { now: clock })
      : createMemoryCache({ maxBytes: config.cache.maxBytes, now: clock });
  const web = createWebGrounding(config.web, { embedder });
  const chat = new ChatService({
    router,
    cache,
    credits: {
      charge: (accountId, amount) => accounts.chargeCredits(accountId, amount),
      refund: (accountId, amount) => accounts.refundCredits(accountId, amount),
    },
    context: new ContextRegistry([memoryContextSource(memory), ragContextSource(rag), webContextSource(web)]),
    warn: (err, message) => logger.warn({ err }, message),
    clock,
    cacheTtlMs: config.cache.ttlSeconds * 1000,
    price: creditsPerRequest,
    budget: (request) => routeBudget(config.routing[request.model] ?? [], request, config.localEngine.contextSize),
    unavailableReason: (model) => localModel.unavailableReason(model),
  });
  // POST /z1/embeddings on the same embedder as documents and memory: one model, the same vector for a text.
  const embeddings = new EmbeddingService({
    embedder,
    credits: {
      charge: (accountId, amount) => accounts.chargeCredits(accountId, amount),
      refund: (accountId, amount) => accounts.refundCredits(accountId, amount),
    },
    price: embeddingCredits,
    upstreamContextTokens: config.embeddingUpstream?.contextTokens ?? DEFAULT_UPSTREAM_EMBEDDING_CONTEXT,
  });
  // Requests are counted under the contract's operations; any other path is one endpoint, 'other'.
  const endpoints = loadContract().operationIds;
  const isEndpoint = (name: string) => endpoints.has(name);
  const sla = new SlaService({
    store: new SqlSlaStore(db),
    clock,
    targets: (tier) => tiers.slaTargets({ tier }),
    isEndpoint,
    onError: (err, lost) => logger.error({ err, lost }, 'writing SLA buckets failed'),
    onPruneError: (err) => logger.error({ err }, 'pruning SLA buckets failed'),
  });
  const sandboxRunner = createSandbox(config.sandbox);
  const metrics = new Metrics({
    isEndpoint,
    models: [...MODEL_IDS, EMBEDDING_MODEL_ID],
    latencyBoundsMs: LATENCY_BOUNDS_MS,
    sources: {
      sandbox: () => sandboxRunner.queueState(),
      localEngine: () => factories.localQueueState(),
      ingestion: async () => ({ processing: await rag.processingCount() }),
    },
  });
  const sandbox = countingExecutions(sandboxRunner, (outcome) => metrics.sandboxExecution(outcome));
  const admission = new ApiAdmission({
    limiter,
    limits: (account) => tiers.rulesFor(account),
    authFailures,
    clock,
    rateLimited: () => metrics.rateLimited(),
    warn: (err, message) => logger.warn({ err }, message),
  });
  const lifecycle = new Lifecycle();

  const operations: Operations = {
    ...systemOperations({
      draining: () => lifecycle.draining,
      database: () => checkDatabase(db),
      localModel: () => localModel.status(),
      sandbox: () => sandbox.health(),
    }),
    ...modelOperations(
      tiers,
      (model) => {
        const { contextTokens, answerTokens } = routeBudget(
          config.routing[model] ?? [],
          {},
          config.localEngine.contextSize,
        );
        return { contextWindow: contextTokens, maxOutputTokens: answerTokens };
      },
      // An embedding upstream away when it is first asked its dimension leaves PV-EMBED out of the listing
      // rather than failing it.
      () =>
        embeddings.limits().catch((err: unknown) => {
          logger.warn({ err }, 'the embedding model did not say its limits');
          return undefined;
        }),
    ),
    ...usageOperations({
      clock,
      usage,
      balance: (accountId) => accounts.balance(accountId),
      rateLimits: (account) => admission.windows(account),
    }),
    ...chatOperations({ chat, tiers }),
    ...embeddingOperations({ embeddings }),
    ...codeOperations({ sandbox, tiers }),
    ...adminOperations(accounts),
    ...ragOperations(rag, tiers),
    ...memoryOperations(memory, tiers),
    ...slaOperations({ sla, tiers }),
    ...metricsOperations(metrics),
  };

  const ports: HttpPorts = {
    clock,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    maxJsonDepth: config.http.maxJsonDepth,
    bodyIdleTimeoutMs: config.http.bodyIdleTimeoutMs,
    streamWriteTimeoutMs: config.http.streamWriteTimeoutMs,
    corsOrigins: config.cors.origins,
    adminToken: config.adminToken,
    authenticate: (secret) => accounts.authenticate(secret),
    authenticationFailed: (address) => admission.authenticationFailed(address),
    admit: (principal) => admission.admit(principal),
    recordRequest: (record) => {
      sla.record(record);
      metrics.observeRequest(record);
      return usage.record(record);
    },
    stopping: lifecycle.signal,
    connections: {
      refused: (scope) => metrics.connectionRefused(scope),
      idleClosed: (scope) => metrics.idleConnectionClosed(scope),
      openConnections: (read) => metrics.readOpenConnections(read),
    },
    extraRoutes: [
      {
        prefix: DASHBOARD_PATH,
        middleware: dashboardRoutes({
          clock,
          sessions: new SessionStore(db),
          throttle: storedSignInThrottle(db),
          accounts,
          usage: { flush: () => usage.flush(), days: (id, start, end) => usageRollup.days(id, start, end) },
          rateLimits: (account) => admission.windows(account),
          documents: rag,
          memory,
          sla: {
            available: (account) => tiers.rulesFor(account).slaEndpoint,
            report: (account, window) => sla.report(account, window),
          },
        }),
      },
    ],
  };

  return {
    config,
    clock,
    logger,
    db,
    accounts,
    accountStore,
    limiter,
    usage,
    sla,
    metrics,
    router,
    cache,
    sandbox,
    localModel,
    web,
    lifecycle,
    operations,
    ports,
    memory,
    // Memory before rag (whose embedder and index it uses), the writers of rows before the database.
    close: () =>
      closeInOrder([
        { name: 'memory', close: () => memory.close() },
        { name: 'rag', close: () => rag.close() },
        { name: 'router', close: () => router.close() },
        { name: 'cache', close: () => cache.close() },
        { name: 'sandbox', close: () => sandbox.close() },
        { name: 'usage', close: () => usage.flush() },
        { name: 'sla', close: () => sla.close() },
        { name: 'limiter', close: () => limiter.close() },
        { name: 'accounts', close: () => accounts.close() },
        { name: 'db', close: () => db.close() },
      ]),
  };
}
