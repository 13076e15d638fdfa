import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { FINAL_ANSWERS_MS } from '../../src/shutdown.js';
import { MIGRATIONS } from '../../src/storage/data-source.js';
import {
  type ComposeService,
  durationMs,
  healthCheckUrls,
  mapServiceAddresses,
  readComposeFile,
  serviceEnvironment,
} from '../support/compose-file.js';
import { type DocumentBody, EMBEDDING_MODEL, filler, type MatchBody } from '../support/documents.js';
import { setUpSkip } from '../support/models.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { QDRANT_BIN, type QdrantServer, qdrantAvailable, startQdrant } from '../support/qdrant.js';
import { TEST_MODEL } from '../support/server.js';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresSkip,
} from '../support/throwaway-postgres.js';

/** Where it cannot run here, why (in CI, CI=true, a missing PostgreSQL or Qdrant fails instead). */
function skipReason(): string | false {
  return (
    throwawayPostgresSkip() ||
    (qdrantAvailable() ? false : `no Qdrant binary at ${QDRANT_BIN} (PVAI_QDRANT_BIN)`) ||
    setUpSkip([EMBEDDING_MODEL])
  );
}

/** What the operator exports before `docker compose up` (docs/deployment.md); models as the set-up put them. */
const OPERATOR_ENV = {
  POSTGRES_PASSWORD: 'deploy-test-postgres-password',
  PVAI_ADMIN_TOKEN: 'deploy-test-admin-token-0123456789',
  QDRANT_API_KEY: 'deploy-test-qdrant-key',
  PVAI_LOCAL_MODEL: TEST_MODEL,
  PVAI_EMBEDDING_MODEL: EMBEDDING_MODEL,
};

interface Replica {
  name: string;
  service: ComposeService;
  env: Record<string, string>;
  /** The port the service listens on in its container (PVAI_PORT as the compose file sets it). */
  containerPort: number;
  server?: ServerProcess;
}

async function json<T>(res: Response): Promise<T> {
  return (await res.json()) as T;
}

/**
 * deploy/compose.yaml's topology as processes on this machine: its PostgreSQL (a server of the test's own, user
 * and database as the file names them), the real Qdrant with the file's API key, and its two pvai replicas started
 * together from the environment the file gives them. What a container provides is mapped, nothing else changed:
 * service hostnames and container ports → 127.0.0.1 and the processes' ports, a volume → a directory.
 */
describe('deploy/compose.yaml: the topology on this machine', { skip: skipReason() }, () => {
  const compose = readComposeFile();
  const replicas: Replica[] = [];
  const dirs: string[] = [];
  let postgres: ThrowawayPostgres;
  let qdrant: QdrantServer;

  before(async () => {
    const qdrantEnv = serviceEnvironment(compose.services.qdrant ?? {}, OPERATOR_ENV);
    [postgres, qdrant] = await Promise.all([
      startThrowawayPostgres(),
      startQdrant({ apiKey: qdrantEnv.QDRANT__SERVICE__API_KEY ?? '' }),
    ]);
    const hosts = {
      postgres: { 5432: new URL(postgres.url).host },
      qdrant: { 6333: new URL(qdrant.url).host },
    };
    for (const [name, service] of Object.entries(compose.services)) {
      if (!/^pvai-\d+$/.test(name)) continue;
      const env = serviceEnvironment(service, OPERATOR_ENV);
      for (const [key, value] of Object.entries(env)) env[key] = mapServiceAddresses(value, hosts);
      for (const volume of service.volumes ?? []) {
        const [, mountPath] = volume.split(':');
        const dir = mkdtempSync(join(tmpdir(), `pvai-${name}-`));
        dirs.push(dir);
        for (const [key, value] of Object.entries(env)) if (value === mountPath) env[key] = dir;
      }
      const containerPort = Number(env.PVAI_PORT);
      // The container's address and port: here a free port on loopback (what `ports:` publishes).
      delete env.PVAI_HOST;
      delete env.PVAI_PORT;
      replicas.push({ name, service, env, containerPort });
    }
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.server?.stop()));
    await qdrant?.stop();
    await postgres?.destroy();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('takes every secret from the environment: without one the file cannot be used', () => {
    const pvai = compose.services['pvai-1'] ?? {};
    for (const secret of ['POSTGRES_PASSWORD', 'PVAI_ADMIN_TOKEN', 'QDRANT_API_KEY'] as const) {
      const { [secret]: _left, ...without } = OPERATOR_ENV;
      assert.throws(() => serviceEnvironment(pvai, without), new RegExp(`required variable ${secret}`));
    }
    const env = serviceEnvironment(pvai, OPERATOR_ENV);
    assert.equal(env.PVAI_ADMIN_TOKEN, OPERATOR_ENV.PVAI_ADMIN_TOKEN);
    assert.match(env.DATABASE_URL ?? '', /^postgres:\/\/pvai:deploy-test-postgres-password@postgres:5432\/pvai$/);
    assert.deepEqual(compose.services['pvai-2']?.environment, compose.services['pvai-1']?.environment);
  });

  it('two replicas start together on an empty database, healthy per the health check, migrated once', {
    timeout: 180_000,
  }, async () => {
    assert.equal(replicas.length, 2, 'the compose file runs two pvai replicas');
    for (const replica of replicas) {
      assert.equal(
        replica.env.DATABASE_URL,
        `postgres://pvai:${OPERATOR_ENV.POSTGRES_PASSWORD}@${new URL(postgres.url).host}/pvai`,
      );
      assert.equal(replica.env.QDRANT_URL, qdrant.url);
      assert.deepEqual(replica.service.depends_on?.postgres, { condition: 'service_healthy' });
      assert.deepEqual(replica.service.depends_on?.qdrant, { condition: 'service_healthy' });
    }
    const servers = await Promise.all(replicas.map((r) => startServerProcess(r.env)));
    replicas.forEach((replica, i) => {
      replica.server = servers[i];
    });
    for (const replica of replicas) {
      const urls = healthCheckUrls(replica.service, replica.containerPort, replica.server?.url ?? '');
      assert.ok(urls.length > 0, `${replica.name}'s health check asks pvai`);
      for (const url of urls) {
        const res = await fetch(url);
        assert.equal(res.status, 200, `${replica.name}: ${url} → ${await res.text()}`);
      }
    }
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      const recorded = await client.query<{ name: string; n: number }>(
        'SELECT name, count(*)::int AS n FROM pvai_migrations GROUP BY name',
      );
      assert.equal(recorded.rows.length, MIGRATIONS.length, 'every migration ran');
      assert.deepEqual(
        recorded.rows.filter((row) => row.n !== 1),
        [],
        'each migration recorded exactly once',
      );
    } finally {
      await client.end();
    }
  });

  it('an API key made through one replica works on the other; a document ingested through one is found through the other', {
    timeout: 120_000,
  }, async () => {
    const urls = replicas.map((r) => r.server?.url ?? assert.fail(`${r.name} is not running`));
    const [one, other] = [urls[0] ?? '', urls[1] ?? ''];
    const created = await fetch(`${one}/admin/accounts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${OPERATOR_ENV.PVAI_ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'deploy@example.com', tier: 'business', credits: 1000 }),
    });
    assert.equal(created.status, 201);
    const apiKey = (await json<{ api_key: string }>(created)).api_key;
    const call = (base: string, method: string, path: string, body?: unknown) =>
      fetch(base + path, {
        method,
        headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    assert.equal((await call(other, 'GET', '/z1/models')).status, 200, 'the key works on the other replica');

    const content = `${filler(12, 5)}\n\nThe harbourmaster's boat is called Gullwing.\n\n${filler(12, 9)}`;
    const upload = await call(one, 'POST', '/z1/rag/documents', { user_id: 'u1', title: 'Harbour', content });
    assert.equal(upload.status, 201);
    const id = (await json<DocumentBody>(upload)).id;
    let document: DocumentBody | undefined;
    for (const deadline = Date.now() + 90_000; Date.now() < deadline; await sleep(200)) {
      const res = await call(other, 'GET', `/z1/rag/documents/${id}?user_id=u1`);
      assert.equal(res.status, 200, 'the other replica knows the document');
      document = await json<DocumentBody>(res);
      if (document.status !== 'processing') break;
    }
    assert.equal(document?.status, 'ready');
    const search = await call(other, 'POST', '/z1/rag/search', {
      user_id: 'u1',
      query: "What is the harbourmaster's boat called?",
      k: 3,
    });
    assert.equal(search.status, 200);
    const matches = (await json<{ data: MatchBody[] }>(search)).data;
    assert.ok(
      matches.some((m) => m.document_id === id && m.snippet.includes('Gullwing')),
      JSON.stringify(matches),
    );
    // In the Qdrant the compose file names, reached with its API key.
    const count = await fetch(`${qdrant.url}/collections/pvai_chunks/points/count`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': qdrant.apiKey ?? '' },
      body: JSON.stringify({ exact: true }),
    });
    assert.equal(count.status, 200);
    assert.ok((await json<{ result: { count: number } }>(count)).result.count > 0, 'the chunks are in Qdrant');
  });

  it('SIGTERM stops each replica, exit 0, within the stop_grace_period the file sets', {
    timeout: 60_000,
  }, async () => {
    for (const replica of replicas) {
      const graceMs = durationMs(replica.service.stop_grace_period ?? '10s');
      // pvai's own deadline (requests in flight, then their final answers) leaves the orchestrator's some room.
      assert.ok(Number(replica.env.PVAI_SHUTDOWN_GRACE_MS) + FINAL_ANSWERS_MS < graceMs);
      const child = replica.server?.child ?? assert.fail(`${replica.name} is not running`);
      const started = performance.now();
      const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
      child.kill('SIGTERM');
      const [code] = await exited;
      const ms = performance.now() - started;
      assert.equal(code, 0, `${replica.name} exits 0`);
      assert.ok(ms < graceMs, `${replica.name} stopped in ${Math.round(ms)} ms, within ${graceMs} ms`);
    }
  });
});
