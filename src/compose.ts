import type { Logger } from 'pino';
import { pino } from 'pino';
import { accountsCapability } from './accounts/index.js';
import { type Capability, Plugboard } from './capability.js';
import { ContextRegistry, chatCapability } from './chat/index.js';
import { type Clock, systemClock } from './clock/index.js';
import { codeCapability } from './code/index.js';
import { type Config, httpSettings } from './config/index.js';
import { conversationsCapability } from './conversations/index.js';
import { dashboardCapability } from './dashboard/index.js';
import { documentsCapability } from './documents/index.js';
import { embeddingsCapability } from './embeddings/index.js';
import { admissionFor, openEngines } from './engines.js';
import { filesCapability } from './files/index.js';
import { type HttpPorts, loadContract } from './http/index.js';
import { idempotencyCapability } from './idempotency/index.js';
import { type Account, EMBEDDING_MODEL_ID, MODEL_IDS } from './kernel/index.js';
import { logsCapability } from './logs/index.js';
import { mcpCapability } from './mcp/index.js';
import { extractorFor, memoryCapability } from './memory/index.js';
import { metricsCapability } from './metrics/index.js';
import { creditsPerRequest, embeddingCredits, embeddingServer, modelsCapability } from './models/index.js';
import { pendingWrites } from './pending-writes.js';
import { responsesCapability, SqlResponseStore } from './responses/index.js';
import { defaultEmbeddingModelPath, vectorIndexCheck } from './retrieval/index.js';
import type { Runtime, ServiceOptions } from './runtime.js';
import { countingExecutions } from './sandbox/index.js';
import { LATENCY_BOUNDS_MS, slaCapability } from './sla/index.js';
import { checkDatabase } from './storage/index.js';
import { Lifecycle, SERVED_PREFIXES, systemCapability } from './system/index.js';
import { ModelNames, TierPolicy } from './tiers/index.js';
import { requestTracing, startTracing, TRACING, traced } from './tracing/index.js';
import { usageCapability } from './usage/index.js';
import { usersCapability } from './users/index.js';
import { vectorStoresCapability } from './vector-stores/index.js';
import { webCapability } from './web/index.js';

export {
  type DocumentRecord,
  type DocumentService,
  documentBody,
  fileToDocument,
  withDocuments,
} from './documents/index.js';
export type { Runtime, ServiceOptions };

/**
 * The composition root, and only wiring: the engines chosen by configuration, then every capability plugged in
 * (each folder's `xxxCapability`, which brings its operations, context source, user-data section, start, close
 * and end-of-request record), then the HTTP layer's ports. Adding a capability is its folder and one `plug` line.
 * A start that fails at any step closes what it had opened, the last opened first, as a stop does.
 */
export async function compose(config: Config, options: ServiceOptions = {}): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger =
    options.logger ??
    pino({ level: config.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] });
  const context = new ContextRegistry();
  const board = new Plugboard(context);
  try {
    return await assemble(config, options, { clock, logger, board, context });
  } catch (err) {
    await board
      .close()
      .catch((closing: unknown) => logger.error({ err: closing }, 'closing after a failed start failed'));
    throw err;
  }
}

async function assemble(config: Config, options: ServiceOptions, { clock, logger, board, context }: Start) {
  const plug = <C extends Capability>(capability: C) => board.plug(capability);
  // Traces (OTEL_* variables; off without an exporter endpoint): opened first, so closed last, after the work in
  // flight, and its buffered spans exported then.
  const tracing = startTracing();
  if (tracing) board.open('tracing', tracing, (t) => t.shutdown());
  const engines = await openEngines(config, { board, clock, logger });
  const { db, soleWorker, localModel, factories, router, embedder, index, cache, limiter } = engines;
  const tiers = new TierPolicy(config.tiers, new ModelNames(config.modelAliases));
  const lifecycle = new Lifecycle();
  const isEndpoint = (name: string) => loadContract().operationIds.has(name);
  const writes = (kind: 'usage' | 'sla' | 'refunds') => pendingWrites(config.dataDir, logger, kind);
  const host = { db, clock, logger, tiers, soleWorker };

  const accounts = plug(
    accountsCapability({
      ...host,
      authCacheTtlMs: config.authCacheTtlMs,
      refunds: writes('refunds'),
      tierCeilings: (tier) => config.tiers[tier],
    }),
  );
  const rateLimited = () => metrics.service.rateLimited();
  const admission = admissionFor(config, { db, limiter, tiers, clock }, { logger, rateLimited });
  const rateLimits = (account: Account) => admission.windows(account);
  const balance = (accountId: string) => accounts.service.balance(accountId);
  const keys = (accountId: string) => accounts.service.listKeys(accountId);
  const usage = plug(usageCapability({ ...host, writes: writes('usage'), balance, rateLimits, keys }));
  const onLogError = (err: unknown, pending: number) =>
    logger.error({ err, pending }, 'writing or sweeping request logs failed');
  const logs = plug(logsCapability({ db, clock, retentionDays: config.logs.retentionDays, onError: onLogError }));
  const onPruneError = (err: unknown) => logger.error({ err }, 'pruning SLA buckets failed');
  const sla = plug(slaCapability({ ...host, isEndpoint, ...writes('sla'), onPruneError }));
  const metrics = plug(
    metricsCapability({
      isEndpoint,
      models: [...MODEL_IDS, EMBEDDING_MODEL_ID],
      latencyBoundsMs: LATENCY_BOUNDS_MS,
      sources: {
        sandbox: () => engines.sandbox.queueState(),
        localEngine: () => factories.localQueueState(),
        localPromptTokens: () => factories.localPromptTokens(),
        ingestion: async () => ({ processing: await documents.service.processingCount() }),
        writeBehind: () => ({
          usage: usage.service.writeState(),
          sla: sla.service.writeState(),
          refunds: accounts.service.refundState(),
        }),
        // Read at scrape time, once everything is plugged.
        idempotency: () => idempotency.service.outcomes,
      },
    }),
  );
  const counted = countingExecutions(engines.sandbox, (outcome) => metrics.service.sandboxExecution(outcome));
  const sandbox = board.open('sandbox', counted, (s) => s.close());

  // Context sources reach chat in this order (memory, documents, web): the order of their passages in a prompt.
  const extractor = options.memoryExtractor ?? extractorFor(config.memory, router, engines.backgroundEmbedder);
  const memory = plug(memoryCapability({ ...host, index, embedder, extractor }));
  const documents = plug(documentsCapability({ ...host, index, embedder }));
  const files = plug(filesCapability(host));
  const vectorStores = plug(
    vectorStoresCapability({
      ...host,
      files: files.service,
      documents: documents.service,
      readFile: documents.readFile,
    }),
  );
  const web = plug(webCapability(config.web, { embedder }));
  const onIdempotencyError = (err: unknown) => logger.error({ err }, 'an Idempotency-Key record could not be written');
  const idempotency = plug(
    idempotencyCapability({
      ...{ db, clock, settings: config.idempotency, onError: onIdempotencyError },
      refund: (refund) => accounts.service.credits.refund(refund),
    }),
  );
  // Paid operations charge through the idempotency service: a keyed request's charges are noted on its claim.
  const credits = idempotency.service.credits(accounts.service.credits);
  const chat = plug(
    chatCapability({
      ...host,
      config,
      localModel,
      factories,
      router,
      cache,
      credits,
      context,
      price: creditsPerRequest,
    }),
  );
  const { routeFacts } = chat;
  const upstreamContextTokens = config.embeddingUpstream?.contextTokens;
  const embeddings = plug(
    embeddingsCapability({
      ...{ logger, embedder, credits, price: embeddingCredits, upstreamContextTokens },
      names: tiers.names,
    }),
  );
  const models = plug(
    modelsCapability({
      ...{ tiers, ...routeFacts, routing: config.routing, localModel: () => localModel.presentPath },
      ...{ embedding: embeddings.limits, embeddingServer: embeddingServerOf(config) },
    }),
  );
  plug(codeCapability({ sandbox, tiers }));
  const mcp = plug(
    mcpCapability({
      documents: documents.service,
      memory: memory.service,
      vectorStores: vectorStores.service,
      web: web.service,
      sandbox,
      tiers,
      credits,
      remote: config.mcp,
    }),
  );
  const responseStore = new SqlResponseStore(db);
  const conversations = plug(conversationsCapability({ db, responses: responseStore, clock }));
  plug(
    responsesCapability({
      ...host,
      ...routeFacts,
      chat: chat.service,
      store: responseStore,
      conversations: conversations.service,
      sandbox,
      mcp: mcp.connector,
      defaultMaxOutputTokens: (model) => routeFacts.budget(model).answerTokens,
      principalOf: (accountId, keyId) => accounts.service.principalOf(accountId, keyId),
      recordUsage: (row) => {
        logs.writer.record(row);
        return usage.service.record(row);
      },
      draining: () => lifecycle.draining,
      options: { leaseMs: config.responses.backgroundLeaseMs, concurrency: config.responses.backgroundConcurrency },
    }),
  );
  const users = plug(usersCapability({ sections: () => board.userData(), clock }));
  plug(
    systemCapability({
      draining: () => lifecycle.draining,
      database: () => checkDatabase(db),
      localModel: () => localModel.status(),
      sandbox: () => sandbox.health(),
      vectorIndex: vectorIndexCheck(config),
    }),
  );
  plug(
    dashboardCapability({
      ...host,
      accounts: accounts.service,
      usage: usage.daily,
      logs: logs.reader,
      rateLimits,
      documents: documents.service,
      documentUpload: documents.upload,
      memory: memory.service,
      users: users.service,
      sla: sla.reports,
      models: models.catalog,
    }),
  );
  // Each capability's start, in plug order: the indexes checked and the workers on, the local model loaded, then
  // the background responses' worker.
  await board.start();

  const ports: HttpPorts = {
    ...httpSettings(config),
    clock,
    logger,
    accessLog: config.logs.access ? logger : undefined,
    authenticate: (secret) => accounts.service.authenticate(secret),
    authenticationFailed: (address) => admission.authenticationFailed(address),
    admit: TRACING.on
      ? (principal) => traced('admission', undefined, () => admission.admit(principal))
      : (principal) => admission.admit(principal),
    tracing: TRACING.on ? requestTracing() : undefined,
    endOfRequest: board.endOfRequest(),
    stopping: lifecycle,
    connections: metrics.connections,
    upgrades: board.upgrades(),
    extraRoutes: board.pages(),
    pathAliases: SERVED_PREFIXES,
    idempotency: idempotency.service,
  };
  const services = { accounts: accounts.service, accountStore: accounts.store, usage: usage.service, sla: sla.service };
  return {
    ...{ config, clock, logger, db, limiter, router, cache, sandbox, localModel, lifecycle, ports, ...services },
    ...{ metrics: metrics.service, web: web.service, memory: memory.service },
    operations: board.operations(),
    close: () => board.close(),
  } satisfies Runtime;
}

/** What serves PV-EMBED, as `/z1/models` says: the embedding upstream, or the local embedding model's file. */
function embeddingServerOf(config: Config) {
  const localPath = config.embeddingModel ?? defaultEmbeddingModelPath(config.dataDir);
  return embeddingServer(config.embeddingUpstream, localPath);
}

interface Start {
  clock: Clock;
  logger: Logger;
  board: Plugboard;
  context: ContextRegistry;
}
