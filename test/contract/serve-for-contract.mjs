#!/usr/bin/env node
// Starts a throw-away pvai server for the contract tools (dredd, schemathesis, the Python client smoke test).
//
//   node test/contract/serve-for-contract.mjs [--backend sqlite|postgres] [--upstream mock|none] [--models setup]
//                                                [--config-json JSON] [--log FILE] [-- COMMAND ARGS...]
//
// - storage: a fresh temp data dir (sqlite, the default) or a fresh PostgreSQL database created on the server
//   named by DATABASE_URL and dropped afterwards (postgres);
// - a config file that raises the enterprise tier's limits and the auth-failure limit so that the tools never
//   hit 429 by volume (429 stays documented; it is just not what these runs are about);
// - PVAI_ADMIN_TOKEN set (random), so /admin is enabled;
// - an enterprise account with 1,000,000 credits, created with the CLI once /z1/health answers;
// - with `--upstream mock` (the default) all four PV models route to a stand-in OpenAI-compatible upstream that
//   this script serves on loopback (a fixed answer, JSON or SSE), so chat completions answer 200 with no model
//   weights on the machine; with `--upstream none` the routing is the server's default (the local engine), and
//   chat completions answer 503 where no GGUF model is installed;
// - always a stand-in SearXNG for `use_web_search` (both stand-ins are in stand-ins.mjs);
// - with `--models setup` the server gets the models scripts/setup fetched (its data dir: PVAI_DATA_DIR or ./data):
//   the chat model as the local engine's (so `--upstream none` answers with SmolLM2) and the embedding model
//   (PVAI_EMBEDDING_MODEL or models/embedding/), for embeddings, retrieval and memory; a missing one fails the start;
// - with `--config-json JSON` its top-level settings replace the ones above (e.g. a route of the set-up's model).
//
// With a COMMAND it runs it with PVAI_URL, PVAI_API_KEY, PVAI_ADMIN_TOKEN, PVAI_ACCOUNT_ID and PVAI_BACKEND in
// its environment, stops the server and exits with the command's status (or 1 when the server died meanwhile).
// Without one it prints those variables as `export` lines and serves until SIGINT/SIGTERM.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startMockSearch, startMockUpstream } from './stand-ins.mjs';

const root = resolve(import.meta.dirname, '../..');
const cli = join(root, 'src/cli/pvai.ts');

function usage(message) {
  if (message) console.error(`serve-for-contract: ${message}`);
  console.error(
    'usage: serve-for-contract.mjs [--backend sqlite|postgres] [--upstream mock|none] [--models setup] [--config-json JSON] [--log FILE] [-- COMMAND ARGS...]',
  );
  process.exit(2);
}

let backend = 'sqlite';
let upstream = 'mock';
let models;
let logFile;
let configJson;
let command = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === '--backend') backend = argv[++i];
  else if (arg === '--upstream') upstream = argv[++i];
  else if (arg === '--models') models = argv[++i];
  else if (arg === '--log') logFile = argv[++i];
  else if (arg === '--config-json') configJson = argv[++i];
  else if (arg === '--') {
    command = argv.slice(i + 1);
    break;
  } else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
  else {
    command = argv.slice(i);
    break;
  }
}
if (backend !== 'sqlite' && backend !== 'postgres') usage(`--backend must be sqlite or postgres, got ${backend}`);
if (upstream !== 'mock' && upstream !== 'none') usage(`--upstream must be mock or none, got ${upstream}`);
if (models !== undefined && models !== 'setup') usage(`--models must be setup, got ${models}`);
let extraConfig = {};
try {
  if (configJson !== undefined) extraConfig = JSON.parse(configJson);
} catch (err) {
  usage(`--config-json is not JSON: ${err.message}`);
}

const say = (msg) => console.error(`serve-for-contract: ${msg}`);
const tmp = mkdtempSync(join(tmpdir(), 'pvai-contract-'));
logFile = resolve(logFile ?? join(tmp, 'server.log'));
const configPath = join(tmp, 'config.json');
const PV_MODELS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'];

/**
 * The models scripts/setup put into its data dir (PVAI_DATA_DIR as the set-up saw it, else ./data): the chat model
 * is the first *.gguf of models/ (the service's own rule), the embedding model PVAI_EMBEDDING_MODEL or the one
 * *.gguf of models/embedding/.
 */
function setUpModels() {
  const dir = join(resolve(process.env.PVAI_DATA_DIR || join(root, 'data')), 'models');
  const gguf = (d) =>
    existsSync(d)
      ? readdirSync(d)
          .filter((f) => f.endsWith('.gguf'))
          .sort()
      : [];
  const chat = gguf(dir)[0];
  const embedding =
    process.env.PVAI_EMBEDDING_MODEL || gguf(join(dir, 'embedding')).map((f) => join(dir, 'embedding', f))[0];
  if (!chat || !embedding || !existsSync(embedding)) {
    throw new Error(
      `--models setup: no chat model in ${dir} or no embedding model in ${join(dir, 'embedding')}: run scripts/setup`,
    );
  }
  say(`models: ${join(dir, chat)}, ${embedding}`);
  return { localModel: join(dir, chat), embeddingModel: resolve(embedding) };
}

async function writeConfig() {
  const config = {
    tiers: { enterprise: { rpm: 1000000, rpd: 1000000, monthly: 100000000 } },
    authFailuresPerMinute: 1000000,
  };
  if (upstream === 'mock') {
    const mock = await startMockUpstream();
    const target = { provider: 'openai-compatible', model: 'contract-upstream', baseUrl: mock.url, maxRetries: 0 };
    config.routing = Object.fromEntries(PV_MODELS.map((m) => [m, [target]]));
    say(`mock upstream at ${mock.url}`);
  }
  if (models === 'setup') Object.assign(config, setUpModels());
  const search = await startMockSearch();
  config.web = { searchProvider: 'searxng', searchUrl: search.url, fetchAllow: [search.url] };
  say(`mock SearXNG at ${search.url}`);
  Object.assign(config, extraConfig);
  writeFileSync(configPath, JSON.stringify(config, null, 2));
}
const adminToken = `contract-admin-${randomBytes(16).toString('hex')}`;

// The server's and the CLI's storage environment: exactly one of PVAI_DATA_DIR alone or DATABASE_URL.
const storageEnv = { ...process.env, PVAI_DATA_DIR: join(tmp, 'data'), PVAI_CONFIG: configPath };
delete storageEnv.DATABASE_URL;
let dropDatabase = async () => {};

async function createDatabase() {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) usage('--backend postgres needs DATABASE_URL (a role that may CREATE DATABASE)');
  const { default: pg } = await import('pg');
  const name = `pvai_contract_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  storageEnv.DATABASE_URL = url.toString();
  say(`PostgreSQL database ${name}`);
  dropDatabase = async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  };
}

let server;
let serverExited = false;
let cleaning;

async function cleanup() {
  cleaning ??= (async () => {
    if (server && !serverExited) {
      const exited = new Promise((done) => server.once('exit', done));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
    }
    try {
      await dropDatabase();
    } catch (err) {
      say(`dropping the contract database failed: ${err.message}`);
    }
    if (!logFile.startsWith(tmp)) rmSync(tmp, { recursive: true, force: true });
    else if (process.exitCode) say(`server log kept in ${logFile}`);
    else rmSync(tmp, { recursive: true, force: true });
  })();
  return cleaning;
}

function tailLog(lines = 40) {
  try {
    const text = readFileSync(logFile, 'utf8').trimEnd().split('\n');
    return text.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

async function fail(message) {
  say(message);
  console.error(`--- last lines of the server log (${logFile}) ---\n${tailLog()}`);
  process.exitCode = 1;
  await cleanup();
  process.exit(1);
}

/** Starts `pvai serve` on a free port (PVAI_PORT=0) and resolves with the URL it logs. */
function startServer() {
  const log = createWriteStream(logFile);
  server = spawn(process.execPath, ['--import', 'tsx', cli, 'serve'], {
    cwd: root,
    env: {
      ...storageEnv,
      PVAI_HOST: '127.0.0.1',
      PVAI_PORT: '0',
      PVAI_ADMIN_TOKEN: adminToken,
      PVAI_LOG_LEVEL: process.env.PVAI_LOG_LEVEL ?? 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stderr.pipe(log, { end: false });
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not log "pvai listening" within 60 s')), 60000);
    server.once('exit', (code, signal) => {
      serverExited = true;
      clearTimeout(timer);
      reject(new Error(`the server exited (${signal ?? code})`));
    });
    createInterface({ input: server.stdout }).on('line', (line) => {
      log.write(`${line}\n`);
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'pvai listening' && entry.url) {
          clearTimeout(timer);
          resolveUrl(entry.url);
        }
      } catch {
        // not a JSON log line
      }
    });
  });
}

async function waitForHealth(url) {
  const deadline = Date.now() + 60000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (serverExited) throw new Error('the server exited while starting');
    try {
      const res = await fetch(`${url}/z1/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err.message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url}/z1/health did not answer 200 within 60 s (${last})`);
}

function createAccount() {
  const email = `contract-${randomBytes(4).toString('hex')}@example.com`;
  const res = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      cli,
      'accounts',
      'create',
      '--email',
      email,
      '--tier',
      'enterprise',
      '--credits',
      '1000000',
      '--json',
    ],
    { cwd: root, env: { ...storageEnv, PVAI_LOG_LEVEL: 'error' }, encoding: 'utf8' },
  );
  if (res.status !== 0) throw new Error(`pvai accounts create failed (${res.status}): ${res.stderr}${res.stdout}`);
  const out = JSON.parse(res.stdout.trim().split('\n').pop());
  if (!out.api_key || !out.account?.id) throw new Error(`unexpected output of accounts create: ${res.stdout}`);
  return out;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    await cleanup();
    process.exit(130);
  });
}

let url;
let account;
try {
  await writeConfig();
  if (backend === 'postgres') await createDatabase();
  url = await startServer();
  await waitForHealth(url);
  account = createAccount();
} catch (err) {
  await fail(`could not start the server: ${err.message}`);
}

const vars = {
  PVAI_URL: url,
  PVAI_API_KEY: account.api_key,
  PVAI_ADMIN_TOKEN: adminToken,
  PVAI_ACCOUNT_ID: account.account.id,
  PVAI_BACKEND: backend,
};
say(`${backend} server at ${url} (account ${account.account.id}, log ${logFile})`);

if (command.length === 0) {
  for (const [k, v] of Object.entries(vars)) console.log(`export ${k}='${v}'`);
  say('serving until SIGINT/SIGTERM');
  server.once('exit', async (code, signal) => {
    await fail(`the server exited (${signal ?? code})`);
  });
} else {
  const child = spawn(command[0], command.slice(1), {
    cwd: process.cwd(),
    env: { ...process.env, ...vars },
    stdio: 'inherit',
  });
  const status = await new Promise((done) => {
    child.once('error', (err) => {
      say(`cannot run ${command[0]}: ${err.message}`);
      done(127);
    });
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
  if (serverExited) {
    await fail(`the server died while ${command[0]} ran`);
  }
  process.exitCode = status;
  await cleanup();
  process.exit(status);
}
