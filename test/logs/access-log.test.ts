import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { traceIdOf } from '../../src/http/access-log.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { pvai, type ServerProcess, startServerProcess } from '../support/processes.js';
import { TEST_MODEL } from '../support/server.js';

interface AccessLine {
  msg: string;
  type?: string;
  time: number;
  request_id: string;
  method: string;
  path: string;
  status: number;
  latency_ms: number;
  bytes: number;
  account_id: string | null;
  key_id: string | null;
  user_id: string | null;
  model: string | null;
  error_code: string | null;
  trace_id?: string;
}

/** The access lines among what the process printed: its log lines (JSON; the start banner is text), parsed. */
function accessLines(stdout: string): AccessLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as AccessLine)
    .filter((line) => line.type === 'access');
}

/**
 * The access log of a real `pvai serve` (embedded SQLite): on by default at `info`, one JSON line on stdout per
 * request (answered, refused, unauthenticated, unknown), the path without its query, the caller, the model, the
 * error code, the bytes, and the trace id of a `traceparent`.
 */
describe('the access log on stdout of pvai serve', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let env: Record<string, string>;
  let apiKey: string;

  before(async () => {
    database = await createTestDatabase('sqlite');
    env = { PVAI_DATA_DIR: database.dataDir, PVAI_LOCAL_MODEL: TEST_MODEL, DATABASE_URL: '' };
    const { stdout } = await pvai(
      ['accounts', 'create', '--email', 'log@example.com', '--tier', 'free', '--json'],
      env,
    );
    apiKey = (JSON.parse(stdout) as { api_key: string }).api_key;
    server = await startServerProcess({ ...env, PVAI_LOG_LEVEL: 'info' }, { stdout: true });
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('writes one JSON line per request, with who, what, status, error code, bytes and trace id', async () => {
    const before = accessLines(server.stdout()).length;
    const auth = { Authorization: `Bearer ${apiKey}` };
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const sent = [
      { path: '/z1/logs?user_id=hunter2', headers: { ...auth, traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
      { path: '/z1/models', headers: { Authorization: 'Bearer pv_sk_wrong' } },
      { path: '/z1/nowhere', headers: auth },
      { path: '/z1/memory', headers: auth },
    ];
    const ids: string[] = [];
    const statuses: number[] = [];
    for (const { path, headers } of sent) {
      const res = await fetch(server.url + path, { headers });
      await res.arrayBuffer();
      ids.push(res.headers.get('x-request-id') as string);
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [200, 401, 404, 400]);

    const lines = await eventually(
      async () => accessLines(server.stdout()).slice(before),
      (l) => ids.every((id) => l.some((line) => line.request_id === id)),
      5000,
    );
    const of = (i: number) => {
      const mine = lines.filter((line) => line.request_id === ids[i]);
      assert.equal(mine.length, 1, `one line for request ${i}: ${JSON.stringify(lines)}`);
      return mine[0] as AccessLine;
    };
    const models = of(0);
    assert.equal(models.msg, 'request');
    assert.equal(models.method, 'GET');
    assert.equal(models.path, '/z1/logs', 'no query string');
    assert.equal(models.status, 200);
    assert.ok(models.account_id?.startsWith('acct_'));
    assert.ok(models.key_id?.startsWith('key_'));
    assert.equal(models.error_code, null);
    assert.ok(models.bytes > 100, 'the bytes sent');
    assert.ok(models.latency_ms >= 0);
    assert.ok(Number.isFinite(models.time));
    assert.equal(models.trace_id, traceId);
    assert.ok(!server.stdout().includes('hunter2'), 'never the query string');
    assert.ok(!server.stdout().includes(apiKey), 'never the key');

    const unauthenticated = of(1);
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.account_id, null);
    assert.equal(unauthenticated.error_code, 'UNAUTHORIZED');
    assert.equal(unauthenticated.trace_id, undefined);

    const unknown = of(2);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.path, '/z1/nowhere');
    assert.equal(unknown.error_code, 'NOT_FOUND');

    const invalid = of(3);
    assert.equal(invalid.status, 400);
    assert.equal(invalid.error_code, 'INVALID_PARAMETER');
  });

  it('reads a trace id only from a valid traceparent', () => {
    assert.equal(
      traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    assert.equal(traceIdOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01'), undefined);
    assert.equal(traceIdOf('garbage'), undefined);
    assert.equal(traceIdOf(undefined), undefined);
  });
});

describe('the logs settings', () => {
  it('reads PVAI_LOGS_RETENTION_DAYS and PVAI_ACCESS_LOG over the defaults, and names a bad one', () => {
    assert.deepEqual(loadConfig({}).logs, { retentionDays: 30, access: true });
    assert.deepEqual(loadConfig({ PVAI_LOGS_RETENTION_DAYS: '7', PVAI_ACCESS_LOG: 'false' }).logs, {
      retentionDays: 7,
      access: false,
    });
    assert.throws(() => loadConfig({ PVAI_ACCESS_LOG: 'maybe' }), /PVAI_ACCESS_LOG/);
    assert.throws(() => loadConfig({ PVAI_LOGS_RETENTION_DAYS: 'a week' }), /PVAI_LOGS_RETENTION_DAYS/);
    assert.throws(() => loadConfig({ PVAI_LOGS_RETENTION_DAYS: '0' }), /logs\.retentionDays/);
  });
});
