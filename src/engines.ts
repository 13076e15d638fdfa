import type { Logger } from 'pino';
import { cacheFor } from './cache/index.js';
import type { Plugboard } from './capability.js';
import { LocalModelSupervisor } from './chat/index.js';
import type { Clock } from './clock/index.js';
import type { Config } from './config/index.js';
import { ApiAdmission, createAuthFailureLimiter, createRateLimitStore, RateLimiter } from './limits/index.js';
import { createProviderFactories, createRouter, routeTargets } from './providers/index.js';
import {
  BackgroundEmbedder,
  chunkIndexFor,
  createEmbedder,
  type Embedder,
  LocalEmbedder,
  SqlChunkIndex,
  tracedEmbedder,
  tracedIndex,
} from './retrieval/index.js';
import { createSandbox, tracedSandbox } from './sandbox/index.js';
import { openDb } from './storage/index.js';
import type { TierPolicy } from './tiers/index.js';
import { TRACING } from './tracing/index.js';

/**
 * The engines the capabilities run on, chosen by configuration, each noted on the board as it opens (so a start
 * that fails later closes it): the database; the local model (found now, loaded by chat's start) and the upstreams
 * behind the router; one embedder (and its background twin) and one index for documents, memories and web ranking (Qdrant when QDRANT_URL
 * is set); the response cache; the sandbox; the rate limiter.
 */
export async function openEngines(config: Config, { board, clock, logger }: EngineDeps) {
  const onError = (message: string) => (err: unknown) => logger.error({ err }, message);
  const { databaseUrl, dataDir } = config;
  const db = board.open('db', await openDb({ databaseUrl, dataDir, owner: true }), (d) => d.close());
  const localModel = new LocalModelSupervisor(config, logger);
  const factories = createProviderFactories({
    localEngine: config.localEngine,
    resolveLocalModelPath: () => localModel.modelPath,
  });
  const targets = routeTargets(config.routing, process.env);
  const router = board.open('router', createRouter(targets, factories, { log: logger }), (r) => r.close());
  // While tracing, the embedder, the index and the sandbox each give their calls a span (otherwise not wrapped).
  const model = createEmbedder(config, logger);
  const traced = (e: Embedder | undefined) => (e && TRACING.on ? tracedEmbedder(e) : e);
  const embedder = board.open('embedder', traced(model), (e) => e?.close());
  // Work nobody waits on (memory's fact extraction) embeds at a lower CPU priority than the server when the model
  // is local; an upstream embedder takes no CPU here, so it serves both.
  const background = model instanceof LocalEmbedder ? new BackgroundEmbedder(model, model.options) : undefined;
  const backgroundEmbedder = background
    ? board.open('background embedder', traced(background), (e) => e?.close())
    : embedder;
  const sqlIndex = () => new SqlChunkIndex(db, { onError: onError('refreshing the document index statistics failed') });
  const warnIndex = (message: string) => logger.warn(message);
  const chunkIndex = chunkIndexFor(config, sqlIndex, warnIndex);
  const index = board.open('index', TRACING.on ? tracedIndex(chunkIndex) : chunkIndex, (i) => i.close());
  const sandbox = createSandbox(config.sandbox);
  const cache = board.open('cache', cacheFor(db, { maxBytes: config.cache.maxBytes, now: clock }), (c) => c.close());
  const rateStore = createRateLimitStore(db, { onError: onError('writing rate-limit windows failed') });
  const limiter = board.open('limiter', new RateLimiter(rateStore, clock), (l) => l.close());
  return {
    db,
    /** This process alone writes the database (the SQLite owner): leases a previous run left are void. */
    soleWorker: db.dialect === 'sqlite' && db.owned,
    localModel,
    factories,
    router,
    embedder,
    backgroundEmbedder,
    index,
    cache,
    sandbox: TRACING.on ? tracedSandbox(sandbox) : sandbox,
    limiter,
  };
}

interface EngineDeps {
  board: Plugboard;
  clock: Clock;
  logger: Logger;
}

/** The API's admission: the tier's rate limits on each request, and the refusal of too many failed keys. */
export function admissionFor(
  config: Config,
  deps: { db: Parameters<typeof createAuthFailureLimiter>[0]; limiter: RateLimiter; tiers: TierPolicy; clock: Clock },
  { logger, rateLimited }: { logger: Logger; rateLimited: () => void },
): ApiAdmission {
  return new ApiAdmission({
    limiter: deps.limiter,
    limits: (account) => deps.tiers.rulesFor(account),
    authFailures: createAuthFailureLimiter(deps.db, config.authFailuresPerMinute, deps.clock),
    clock: deps.clock,
    rateLimited,
    warn: (err, message) => logger.warn({ err }, message),
  });
}
