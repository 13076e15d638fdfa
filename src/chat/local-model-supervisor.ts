import type { Logger } from 'pino';
import type { AccountService } from '../accounts/index.js';
import { createMemoryCache, createPostgresCache, type ResponseCache } from '../cache/index.js';
import type { Clock } from '../clock/clock.js';
import type { Config, TargetConfig } from '../config/index.js';
import {
  createProgressPrinter,
  createProviderFactories,
  createRouter,
  downloadModel,
  type LocalChatProvider,
  type Router,
  type Target,
} from '../providers/index.js';
import type { Db } from '../storage/db.js';
import { ChatService } from './chat-service.js';
import { downloadPath, type LocalModelLocation, locateLocalModel } from './local-model.js';

export interface ChatEngine {
  chat: ChatService;
  router: Router;
  cache: ResponseCache;
  /** Readiness of the local engine (when any model routes to it). */
  localModelStatus(): { ok: boolean; detail: string };
  close(): Promise<void>;
}

/** Config targets → router targets; `apiKeyEnv` reads the upstream key from the environment. */
function toTarget(target: TargetConfig, env: NodeJS.ProcessEnv): Target {
  if (target.provider === 'local') return { ...target };
  const { apiKeyEnv, ...rest } = target;
  const apiKey = rest.apiKey ?? (apiKeyEnv ? env[apiKeyEnv] : undefined);
  return { ...rest, ...(apiKey ? { apiKey } : {}) };
}

export async function createChatEngine(deps: {
  config: Config;
  db: Db;
  accounts: AccountService;
  clock: Clock;
  logger: Logger;
}): Promise<ChatEngine> {
  const { config, logger } = deps;
  let location: LocalModelLocation = locateLocalModel(config);
  const factories = createProviderFactories({
    localEngine: config.localEngine,
    resolveLocalModelPath: () => location.path ?? 'missing-local-model.gguf',
  });
  const targets = Object.fromEntries(
    Object.entries(config.routing).map(([model, list]) => [model, list.map((t) => toTarget(t, process.env))]),
  );
  const router = createRouter(targets, factories);
  const { db } = deps;
  const cache =
    db.dialect === 'postgres'
      ? createPostgresCache((sql, params) => db.pool.query(sql, params), { now: deps.clock })
      : createMemoryCache({ maxBytes: config.cache.maxBytes, now: deps.clock });
  // Targets without a modelPath run on the service's own local model.
  const onServiceModel = (t: TargetConfig) => t.provider === 'local' && !t.modelPath;
  const onlyLocal = (model: string) => (config.routing[model] ?? []).every(onServiceModel);
  const localIsUsed = Object.values(config.routing).some((targets) => targets.some(onServiceModel));
  let loaded: LocalChatProvider | undefined;
  let loadError: string | undefined;

  const warmUp = async () => {
    if (!location.path || !localIsUsed) return;
    try {
      const provider = factories.local({ provider: 'local', model: 'local' }) as LocalChatProvider;
      await provider.load();
      loaded = provider;
      logger.info({ model: location.path }, 'local model loaded');
    } catch (err) {
      loadError = (err as Error).message;
      logger.error({ err, model: location.path }, 'local model failed to load');
    }
  };
  if (location.downloadFrom) {
    const url = location.downloadFrom;
    const printer = createProgressPrinter();
    downloadModel(url, downloadPath(config, url), { onProgress: (p) => printer.update(p) })
      .then(async () => {
        printer.done();
        location = locateLocalModel(config);
        await warmUp();
      })
      .catch((err: Error) => {
        location = { problem: `Downloading the local model from ${url} failed: ${err.message}` };
      });
  } else {
    await warmUp();
  }

  const chat = new ChatService({
    router,
    cache,
    accounts: deps.accounts,
    hooks: [],
    clock: deps.clock,
    cacheTtlMs: config.cache.ttlSeconds * 1000,
    unavailableReason: (model) => (onlyLocal(model) ? (location.problem ?? loadError) : undefined),
  });
  return {
    chat,
    router,
    cache,
    localModelStatus() {
      if (!localIsUsed) return { ok: true, detail: 'no model routes to the local engine' };
      if (location.problem) return { ok: false, detail: location.problem };
      if (loadError) return { ok: false, detail: loadError };
      return { ok: true, detail: loaded ? `loaded ${location.path}` : `available ${location.path}` };
    },
    async close() {
      await router.close();
      await cache.close();
    },
  };
}
