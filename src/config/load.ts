import { readFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { aliasesFromEnv } from './aliases.js';
import { idempotencyFromEnv } from './idempotency.js';
import { logsFromEnv } from './logs.js';
import { qdrantFromEnv } from './qdrant.js';
import { resolveRouting } from './routing.js';
import { type Config, configSchema, type RawConfig, resolveTiers } from './schema.js';
import { mcpFromEnv, webFromEnv } from './web.js';

/** A bad setting stops the start; the message names the setting and what is wrong with it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Environment variables and the config-file key each one sets. */
const ENV_KEYS: ReadonlyArray<[string, keyof RawConfig, 'string' | 'int']> = [
  ['PVAI_HOST', 'host', 'string'],
  ['PVAI_PORT', 'port', 'int'],
  ['PVAI_DATA_DIR', 'dataDir', 'string'],
  ['DATABASE_URL', 'databaseUrl', 'string'],
  ['PVAI_ADMIN_TOKEN', 'adminToken', 'string'],
  ['PVAI_LOG_LEVEL', 'logLevel', 'string'],
  ['PVAI_BODY_LIMIT_BYTES', 'bodyLimitBytes', 'int'],
  ['PVAI_AUTH_FAILURES_PER_MINUTE', 'authFailuresPerMinute', 'int'],
  ['PVAI_LOCAL_MODEL', 'localModel', 'string'],
  ['PVAI_EMBEDDING_MODEL', 'embeddingModel', 'string'],
  ['QDRANT_URL', 'qdrantUrl', 'string'],
  ['QDRANT_API_KEY', 'qdrantApiKey', 'string'],
  ['QDRANT_COLLECTION', 'qdrantCollection', 'string'],
  ['PVAI_AUTH_CACHE_TTL_MS', 'authCacheTtlMs', 'int'],
  ['PVAI_SHUTDOWN_GRACE_MS', 'shutdownGraceMs', 'int'],
];

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`PVAI_CONFIG: cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = extname(path) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `PVAI_CONFIG: ${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message}`,
    );
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`PVAI_CONFIG: ${path} must hold an object of settings`);
  }
  return parsed as Record<string, unknown>;
}

function fromEnv(env: Env): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, key, kind] of ENV_KEYS) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    if (kind === 'int') {
      if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(`${name}: must be an integer, got "${value}"`);
      out[key] = Number(value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.join('.');
  const envName = ENV_KEYS.find(([, key]) => key === issue.path[0])?.[0];
  const where = envName && issue.path.length === 1 ? `${path} (${envName})` : path || '(root)';
  return `${where}: ${issue.message}`;
}

/** Environment over file over defaults; validated once and frozen. */
export function loadConfig(env: Env = process.env, overrides: RawConfig = {}): Config {
  const file = env.PVAI_CONFIG ? readConfigFile(resolve(env.PVAI_CONFIG)) : {};
  const web = webFromEnv(env, file.web);
  const mcp = mcpFromEnv(env, file.mcp);
  const modelAliases = aliasesFromEnv(env.PVAI_MODEL_ALIASES);
  const logs = logsFromEnv(env, file.logs, (message) => new ConfigError(message));
  const qdrant = qdrantFromEnv(env, file.qdrant, (message) => new ConfigError(message));
  const idempotency = idempotencyFromEnv(env, file.idempotency, (message) => new ConfigError(message));
  const result = configSchema.safeParse({
    ...file,
    ...fromEnv(env),
    ...(web ? { web } : {}),
    ...(mcp ? { mcp } : {}),
    ...(modelAliases ? { modelAliases } : {}),
    ...(logs ? { logs } : {}),
    ...(qdrant ? { qdrant } : {}),
    ...(idempotency ? { idempotency } : {}),
    ...overrides,
  });
  if (!result.success) {
    throw new ConfigError(`invalid configuration: ${result.error.issues.map(describeIssue).join('; ')}`);
  }
  const { tiers, routing, ...rest } = result.data;
  const config: Config = { ...rest, tiers: resolveTiers(tiers), routing: resolveRouting(routing) };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
