import { z } from 'zod';
import { TIERS, type Tier } from '../kernel/index.js';
import { DEFAULT_TIER_RULES, type TierRules } from '../tiers/index.js';
import { modelAliasesSchema } from './aliases.js';
import { cacheSchema } from './cache.js';
import { corsSchema, httpSchema } from './http.js';
import { idempotencySchema } from './idempotency.js';
import { logsSchema } from './logs.js';
import { qdrantSchema } from './qdrant.js';
import { localEngineSchema, routingSchema, type TargetConfig } from './routing.js';
import { mcpSchema, webSchema } from './web.js';

const tierOverride = z
  .object({
    rpm: z.number().int().positive(),
    rpd: z.number().int().positive(),
    monthly: z.number().int().positive(),
    models: z.array(z.string().min(1)).min(1),
    maxRagK: z.number().int().min(1).max(100),
    codeTimeoutMaxSeconds: z.number().int().min(1).max(120),
    codeTimeoutDefaultSeconds: z.number().int().min(1).max(120),
    slaEndpoint: z.boolean(),
    slaAvailabilityTarget: z.number().min(0).max(1),
    slaLatencyTargetMs: z.number().int().min(1).max(2_147_483_647),
    maxFileBytes: z.number().int().min(1).max(536_870_912),
    maxStoredBytes: z.number().int().min(1),
    maxFiles: z.number().int().min(1),
    maxVectorStores: z.number().int().min(1),
  })
  .partial()
  .strict();

/** Everything the service reads at start. Unknown keys are refused so a typo never silently does nothing. */
export const configSchema = z
  .object({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    dataDir: z.string().min(1).default('./data'),
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    adminToken: z.string().min(16, 'must be at least 16 characters').optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    bodyLimitBytes: z
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /** Timeouts of slow clients and the JSON nesting limit (src/config/http.ts says why each default). */
    http: httpSchema,
    cors: corsSchema,
    /** Failed authentications allowed per client address per minute before 429. */
    authFailuresPerMinute: z.number().int().positive().default(30),
    /** How long a resolved API key is reused before asking the database again; 0 disables. */
    authCacheTtlMs: z.number().int().min(0).max(60_000).default(1000),
    /**
     * On SIGTERM/SIGINT, how long requests in flight may take to finish before they are ended (a stream
     * with a final error event, any other request with 503). 8 s: with the 1 s left for those last answers
     * and the final writes, the stop fits inside `docker stop`'s 10 s (Kubernetes gives 30 s).
     */
    shutdownGraceMs: z.number().int().min(0).max(600_000).default(8000),
    tiers: z
      .object(Object.fromEntries(TIERS.map((t) => [t, tierOverride.optional()])))
      .strict()
      .default({}),
    /** GGUF path or URL of the local model (PVAI_LOCAL_MODEL); default: the first *.gguf in <dataDir>/models. */
    localModel: z.string().min(1).optional(),
    /**
     * GGUF of the sentence-embedding model (PVAI_EMBEDDING_MODEL), for retrieval and memory; default
     * `<dataDir>/models/embedding/all-MiniLM-L6-v2.Q8_0.gguf`, where `scripts/setup` puts it (src/setup).
     */
    embeddingModel: z.string().min(1).optional(),
    /**
     * Retrieval on Qdrant (QDRANT_URL, e.g. `http://qdrant:6333`) instead of the service's own database;
     * documents and chunk text stay in the database either way (docs/decisions.md). A cluster's nodes may be
     * listed, comma-separated: pvai uses the first that answers and moves to the next when one cannot be reached.
     */
    qdrantUrl: z
      .string()
      .regex(
        /^https?:\/\/[^/\s,][^\s,]*(\s*,\s*https?:\/\/[^/\s,][^\s,]*)*$/,
        "must be the http:// or https:// URL of the Qdrant REST API, or a cluster's nodes' URLs separated by commas",
      )
      .optional(),
    /** Qdrant's API key (QDRANT_API_KEY), when it requires one. */
    qdrantApiKey: z.string().min(1).optional(),
    /** The Qdrant collection (QDRANT_COLLECTION); one collection holds every tenant's chunks. */
    qdrantCollection: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,255}$/, 'letters, digits, _ and - only')
      .default('pvai_chunks'),
    /** The collection's shards, replicas and write consistency on a Qdrant cluster (src/config/qdrant.ts). */
    qdrant: qdrantSchema,
    /** Embeddings from an OpenAI-compatible /embeddings endpoint instead of the local model (config file only). */
    embeddingUpstream: z
      .object({
        baseUrl: z.string().url(),
        model: z.string().min(1),
        /** Environment variable holding the upstream's API key. */
        apiKeyEnv: z.string().min(1).optional(),
        batchSize: z.number().int().min(1).max(2048).optional(),
        /**
         * The upstream model's window in tokens, as `/z1/models` reports it for PV-EMBED (default 8191, OpenAI's
         * embedding models'). pvai has not the upstream's tokenizer: the upstream enforces its own window.
         */
        contextTokens: z.number().int().min(1).max(1_000_000).optional(),
      })
      .strict()
      .optional(),
    localEngine: localEngineSchema,
    /** Memory: `extractionModel` extracts facts with that PV model (JSON-schema answer) instead of the statement model. */
    memory: z
      .object({ extractionModel: z.enum(['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX']).optional() })
      .strict()
      .default({}),
    /**
     * Background responses: `backgroundLeaseMs` is how long a run's lease lasts without renewal (renewed every
     * third of it while the run goes on), so how long after a crash its response is ended `failed`;
     * `backgroundConcurrency` how many run at once on one replica (the others wait, queued).
     */
    responses: z
      .object({
        backgroundLeaseMs: z.number().int().min(300).max(600_000).default(30_000),
        backgroundConcurrency: z.number().int().min(1).max(1024).default(16),
      })
      .strict()
      .default({ backgroundLeaseMs: 30_000, backgroundConcurrency: 16 }),
    routing: routingSchema,
    /** Other names of the PV models, e.g. `gpt-4o-mini: PV-TURBO` (PVAI_MODEL_ALIASES; src/config/aliases.ts). */
    modelAliases: modelAliasesSchema,
    cache: cacheSchema,
    /** Web grounding: search provider and page fetching (src/config/web.ts). */
    web: webSchema,
    /** Request logs' retention and the stdout access log (src/config/logs.ts). */
    logs: logsSchema,
    /** Idempotency-Key: window, stored-answer cap, wait and lease (src/config/idempotency.ts). */
    idempotency: idempotencySchema,
    /** Remote MCP servers of Responses' `mcp` tools: whom pvai connects to, how long, how much (src/config/web.ts). */
    mcp: mcpSchema,
    /** Overrides of the sandbox defaults (src/sandbox/types.ts); validated again by the sandbox. */
    sandbox: z
      .object({
        bwrapPath: z.string().min(1),
        pythonPath: z.string().min(1),
        poolSize: z.number().int().min(0).max(64),
        maxConcurrent: z.number().int().min(1).max(256),
        maxQueue: z.number().int().min(0).max(10_000),
        maxConcurrentPerAccount: z.number().int().min(1).max(256),
        maxQueuePerAccount: z.number().int().min(0).max(10_000),
        outputLimitBytes: z.number().int().min(1),
        memoryLimitMb: z.number().int().min(64),
        workDirSizeMb: z.number().int().min(1),
        workDirMaxFiles: z.number().int().min(2),
        maxFileSizeMb: z.number().int().min(1),
        maxProcesses: z.number().int().min(2),
        maxOpenFiles: z.number().int().min(16),
      })
      .partial()
      .strict()
      .default({}),
  })
  .strict();

export type RawConfig = z.input<typeof configSchema>;
type ParsedConfig = z.output<typeof configSchema>;

export interface Config extends Omit<ParsedConfig, 'tiers' | 'routing'> {
  tiers: Readonly<Record<Tier, TierRules>>;
  /** Every PV model → its ordered targets (defaults filled in). */
  routing: Readonly<Record<string, readonly TargetConfig[]>>;
}

/** Fills each tier's rules from the defaults, then applies the configured overrides. */
export function resolveTiers(overrides: ParsedConfig['tiers']): Record<Tier, TierRules> {
  const out = {} as Record<Tier, TierRules>;
  for (const tier of TIERS) {
    const override = (overrides as Partial<Record<Tier, Partial<TierRules>>>)[tier] ?? {};
    out[tier] = { ...DEFAULT_TIER_RULES[tier], ...override };
  }
  return out;
}
