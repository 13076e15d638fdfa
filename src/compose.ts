import type { Logger } from 'pino';
import { pino } from 'pino';
import { AccountService, adminOperations, createAccountStore } from './accounts/index.js';
import { cacheFor } from './cache/index.js';
import { ChatService, ContextRegistry, chatOperations, LocalModelSupervisor, routeBudget } from './chat/index.js';
import { type Clock, systemClock } from './clock/index.js';
import { codeOperations } from './code/index.js';
import { type Config, routeReadsImages, routeTemperature } from './config/index.js';
import { conversationsCapability } from './conversations/index.js';
import { DASHBOARD_PATH, dashboardRoutes, SessionStore } from './dashboard/index.js';
import {
  DocumentService,
  documentOperations,
  documentsContextSource,
  documentsUserData,
  SqlDocumentStore,
} from './documents/index.js';
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
  extractorFor,
  MemoryService,
  memoryContextSource,
  memoryKindOf,
  memoryOperations,
  memoryUserData,
  SqlExtractionQueue,
  SqlMemoryExport,
  SqlMemoryStore,
} from './memory/index.js';
import { Metrics, metricsOperations } from './metrics/index.js';
import { creditsPerRequest, embeddingCredits, modelOperations } from './models/index.js';
import { pendingWrites } from './pending-writes.js';
import { createProviderFactories, createRouter, routeTargets } from './providers/index.js';
import { responsesCapability, SqlResponseStore } from './responses/index.js';
import { chunkIndexFor, createEmbedder, SqlChunkIndex, vectorIndexCheck } from './retrieval/index.js';
import { closeOpen, type OpenParts, type Runtime, type ServiceOptions } from './runtime.js';
import { countingExecutions, createSandbox } from './sandbox/index.js';
import { LATENCY_BOUNDS_MS, SlaService, SqlSlaStore, slaOperations } from './sla/index.js';
import { checkDatabase, type Db, openDb } from './storage/index.js';
import { closeInOrder, Lifecycle, systemOperations } from './system/index.js';
import { TierPolicy } from './tiers/index.js';
import { BufferedUsageStore, DailyUsageRollup, SqlUsageStore, usageOperations, usageUserData } from './usage/index.js';
import { UserDataService, userOperations } from './users/index.js';
import { createWebGrounding, webContextSource } from './web/index.js';

/** The window `/z1/models` reports for an embedding upstream that states none: OpenAI's embedding models' (8191). */
const DEFAULT_UPSTREAM_EMBEDDING_CONTEXT = 8191;

export type { Runtime, ServiceOptions };

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
  // A start that fails at any later step closes what it opened, and leaves nothing open.
  const opened: OpenParts = { db: () => db.close() };
  try {
    return await assemble({ config, options, clock, logger, db, opened });
  } catch (err) {
    await closeOpen(opened).catch((closing: unknown) =>
      logger.error({ err: closing }, 'closing after a failed start failed'),
    );
    throw err;
  }
}

interface Assembly {
  config: Config;
  options: ServiceOptions;
  clock: Clock;
  logger: Logger;
  db: Db;
  /** Each part that needs closing is added as soon as it exists. */
  opened: OpenParts;
}

async function assemble({ config, options, clock, logger, db, opened }: Assembly): Promise<Runtime> {
  // The chat engines: the service's local model (found here, loaded by localModel.start below) and the
  // upstreams, behind the router. Nothing runs until a request (or the start) asks.
  const localModel = new LocalModelSupervisor(config, logger);
  const factories = createProviderFactories({
    localEngine: config.localEngine,
    resolveLocalModelPath: () => localModel.modelPath,
  });
  const router = createRouter(routeTargets(config.routing, process.env), factories, { log: logger });
  opened.router = () => router.close();
  // One embedding model for documents, memories and web passage ranking (DocumentService closes it), and one
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
  const documents = new DocumentService({
    store: new SqlDocumentStore(db),
    index,
    embedder,
    clock,
    logger,
    soleWorker: db.dialect === 'sqlite' && db.owned,
  });
  const memoryStore = new SqlMemoryStore(db);
  const memory = new MemoryService({
    store: memoryStore,
    index: memoryKindOf(index),
    embedder,
    extractor: options.memoryExtractor ?? extractorFor(config.memory, router, embedder),
    queue: new SqlExtractionQueue(db),
    soleWorker: db.dialect === 'sqlite' && db.owned,
    clock,
    logger,
  });
  opened.documents = () => documents.close();
  opened.memory = () => memory.close();
  // First, with only the database open: an index built with another embedding model stops the start here.
  await documents.start();
  await memory.start();
  const accountStore = createAccountStore(db, {
    onError: (err) => logger.error({ err }, 'writing credit charges failed'),
  });
  const refunds = pendingWrites(config.dataDir, logger, 'refunds');
  const accounts = new AccountService(accountStore, clock, { authCacheTtlMs: config.authCacheTtlMs, refunds });
  opened.accounts = () => accounts.close();
  const tiers = new TierPolicy(config.tiers);
  const limiter = new RateLimiter(
    createRateLimitStore(db, { onError: (err) => logger.error({ err }, 'writing rate-limit windows failed') }),
    clock,
  );
  opened.limiter = () => limiter.close();
  const authFailures = createAuthFailureLimiter(db, config.authFailuresPerMinute, clock);
  // The dashboard's charts read the daily rollup that SqlUsageStore keeps as it writes usage rows.
  const usageRollup = new DailyUsageRollup(db);
  const usageStore = new SqlUsageStore(db);
  const usage = new BufferedUsageStore(usageStore, pendingWrites(config.dataDir, logger, 'usage'));
  opened.usage = () => usage.close();
  const responseStore = new SqlResponseStore(db);
  const conversations = conversationsCapability({ db, responses: responseStore, clock });

  const cache = cacheFor(db, { maxBytes: config.cache.maxBytes, now: clock });
  opened.cache = () => cache.close();
  const web = createWebGrounding(config.web, { embedder });
  // What a model's route says of it: it reads images, its temperature for requests naming none (docs/routing.md).
  const readsImages = (model: string) => routeReadsImages(config.routing[model] ?? []);
  const defaultTemperature = (model: string) => routeTemperature(config.routing[model] ?? []);
  const chat = new ChatService({
    router,
    cache,
    credits: accounts.credits,
    context: new ContextRegistry([
      memoryContextSource(memory),
      documentsContextSource(documents),
      webContextSource(web),
    ]),
    warn: (err, message) => logger.warn({ err }, message),
    clock,
    cacheTtlMs: config.cache.ttlSeconds * 1000,
    price: creditsPerRequest,
    budget: (request) => routeBudget(config.routing[request.model] ?? [], request, config.localEngine.contextSize),
    unavailableReason: (model) => localModel.unavailableReason(model),
    readsImages,
    defaultTemperature,
  });
  // POST /z1/embeddings on the same embedder as documents and memory: one model, the same vector for a text.
  const embeddings = new EmbeddingService({
    embedder,
    credits: accounts.credits,
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
    ...pendingWrites(config.dataDir, logger, 'sla'),
    onPruneError: (err) => logger.error({ err }, 'pruning SLA buckets failed'),
  });
  opened.sla = () => sla.close();
  const sandboxRunner = createSandbox(config.sandbox);
  const metrics = new Metrics({
    isEndpoint,
    models: [...MODEL_IDS, EMBEDDING_MODEL_ID],
    latencyBoundsMs: LATENCY_BOUNDS_MS,
    sources: {
      sandbox: () => sandboxRunner.queueState(),
      localEngine: () => factories.localQueueState(),
      ingestion: async () => ({ processing: await documents.processingCount() }),
      writeBehind: () => ({ usage: usage.writeState(), sla: sla.writeState(), refunds: accounts.refundState() }),
    },
  });
  const sandbox = countingExecutions(sandboxRunner, (outcome) => metrics.sandboxExecution(outcome));
  opened.sandbox = () => sandbox.close();
  const admission = new ApiAdmission({
    limiter,
    limits: (account) => tiers.rulesFor(account),
    authFailures,
    clock,
    rateLimited: () => metrics.rateLimited(),
    warn: (err, message) => logger.warn({ err }, message),
  });
  const lifecycle = new Lifecycle();
  // Background responses run on every replica's worker, from the queue in the database.
  const responses = responsesCapability({
    chat,
    store: responseStore,
    conversations: conversations.service,
    sandbox,
    clock,
    logger,
    db,
    tiers,
    defaultMaxOutputTokens: (model) =>
      routeBudget(config.routing[model] ?? [], {}, config.localEngine.contextSize).answerTokens,
    readsImages,
    defaultTemperature,
    principalOf: (accountId, keyId) => accounts.principalOf(accountId, keyId),
    recordUsage: (row) => usage.record(row),
    soleWorker: db.dialect === 'sqlite' && db.owned,
    draining: () => lifecycle.draining,
    options: { leaseMs: config.responses.backgroundLeaseMs, concurrency: config.responses.backgroundConcurrency },
  });
  opened.responses = () => responses.background.close();
  // An end user's data in one call each: every capability that keeps some registers its section here.
  const users = new UserDataService(
    {
      memories: memoryUserData(memory, new SqlMemoryExport(db, memoryStore)),
      documents: documentsUserData(documents),
      responses: responses.userData,
      conversations: conversations.userData,
      usage: usageUserData(usage, usageStore),
    },
    clock,
  );

  const operations: Operations = {
    ...systemOperations({
      draining: () => lifecycle.draining,
      database: () => checkDatabase(db),
      localModel: () => localModel.status(),
      sandbox: () => sandbox.health(),
      vectorIndex: vectorIndexCheck(config),
    }),
    ...modelOperations(
      tiers,
      (model) => {
        const budget = routeBudget(config.routing[model] ?? [], {}, config.localEngine.contextSize);
        return {
          contextWindow: budget.contextTokens,
          maxOutputTokens: budget.answerTokens,
          readsImages: readsImages(model),
        };
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
    ...responses.operations,
    ...conversations.operations,
    ...embeddingOperations({ embeddings }),
    ...codeOperations({ sandbox, tiers }),
    ...adminOperations(accounts),
    ...documentOperations(documents, tiers),
    ...memoryOperations(memory, tiers),
    ...userOperations(users),
    ...slaOperations({ sla, tiers }),
    ...metricsOperations(metrics),
  };

  // Loaded last: a wait earlier in the assembly left each scavenge keeping ~3x the bytes; last, it costs nothing.
  await localModel.start(factories);
  await responses.background.start();
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
    stopping: lifecycle,
    connections: {
      refused: (scope) => metrics.connectionRefused(scope),
      idleClosed: (scope) => metrics.idleConnectionClosed(scope),
      openConnections: (read) => metrics.readOpenConnections(read),
    },
    // WebSocket mode of the Responses API: each message a createResponse request.
    upgrades: [responses.socket],
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
          documents: documents,
          memory,
          users,
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
    // Every part is open by now: the same closes a failed start would have run, in CLOSE_ORDER.
    close: () => closeOpen(opened),
  };
}

/**
 * The documents capability alone on the service's storage, for `pvai documents`: a worker like the server's (it takes
 * this command's jobs and any other unleased ones), on the server's index (Qdrant when QDRANT_URL is set), so
 * what is added here is found there. Only `add` embeds; `list` and `rm` need not load the model.
 */
export async function withDocuments<T>(
  config: Config,
  options: { embed: boolean; logger: Logger },
  fn: (documents: DocumentService) => Promise<T>,
): Promise<T> {
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  const documents = new DocumentService({
    store: new SqlDocumentStore(db),
    index: chunkIndexFor(config, () => new SqlChunkIndex(db)),
    embedder: options.embed ? createEmbedder(config, options.logger) : undefined,
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
      { name: 'db', close: () => db.close() },
    ]);
  }
}

/** What `pvai documents` handles of the documents capability: its service, its records and how the API shows them. */
export { type DocumentRecord, type DocumentService, documentBody, fileToDocument } from './documents/index.js';
