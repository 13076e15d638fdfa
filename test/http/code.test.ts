import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sandboxHostSkip } from '../support/sandbox-host.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Result {
  output: string;
  error: string | null;
  execution_time_ms: number;
}

describe('POST /z1/code/execute', { skip: sandboxHostSkip() }, () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer('sqlite', {
      config: { tiers: { free: { rpm: 1000, codeTimeoutDefaultSeconds: 1, codeTimeoutMaxSeconds: 2 } } },
    });
    ({ apiKey } = await server.createAccount('free', 0));
  });
  after(() => server.close());

  const run = (body: Record<string, unknown>, key = apiKey) =>
    server.request<Result & { code?: string; message?: string; details?: Record<string, unknown> }>(
      'POST',
      '/z1/code/execute',
      { apiKey: key, body: { user_id: 'u1', ...body } },
    );

  it('returns output, no error and the execution time, at 0 credits', async () => {
    const res = await run({ code: 'print(sum(range(10)))\nprint("héllo ✓")' });
    assert.equal(res.status, 200);
    assert.equal(res.body.output, '45\nhéllo ✓\n');
    assert.equal(res.body.error, null);
    assert.ok(res.body.execution_time_ms >= 0);
    assert.equal(res.headers.get('x-credits-charged'), '0');
    // Its usage row names the end user, for the user's export (and is made anonymous by their erase).
    const rows = await server.usageRows<{ user_id: string | null }>(
      "SELECT user_id FROM usage_records WHERE request_id = $1 AND endpoint = 'executeCode'",
      [res.headers.get('x-request-id')],
    );
    assert.deepEqual(rows, [{ user_id: 'u1' }]);
  });

  it('puts an exception traceback in error with status 200', async () => {
    const res = await run({ code: 'print("before")\n1/0' });
    assert.equal(res.status, 200);
    assert.equal(res.body.output.startsWith('before\n'), true);
    assert.match(res.body.error ?? '', /ZeroDivisionError/);
  });

  it('answers 408 EXECUTION_TIMEOUT with the output so far, using the tier default when timeout is omitted', async () => {
    const started = Date.now();
    const res = await run({ code: 'import time\nprint("started", flush=True)\ntime.sleep(30)' });
    assert.equal(res.status, 408);
    assert.equal(res.body.code, 'EXECUTION_TIMEOUT');
    assert.deepEqual(res.body.details, { timeout: 1, output: 'started\n' });
    assert.ok(Date.now() - started < 5000);
  });

  it('refuses a timeout above the tier maximum', async () => {
    const res = await run({ code: 'print(1)', timeout: 3 });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'TIMEOUT_EXCEEDS_TIER');
  });

  it('keeps the host out of reach and still answers the next request', async () => {
    const res = await run({
      code: [
        'import os, socket',
        'print(os.path.exists("/etc/shadow"), os.path.exists("/root"), "PVAI" in "".join(os.environ))',
        'try:',
        '    socket.create_connection(("127.0.0.1", 22), timeout=1); print("connected")',
        'except OSError as e:',
        '    print("no network")',
      ].join('\n'),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.output, 'False False False\nno network\n');
    const next = await run({ code: 'print("ok")' });
    assert.equal(next.body.output, 'ok\n');
  });

  it('runs 20 concurrent executions of 4 accounts, each with its own output', async () => {
    const keys = [
      apiKey,
      ...(await Promise.all([1, 2, 3].map(async () => (await server.createAccount('free', 0)).apiKey))),
    ];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => run({ code: `print(${i} * 2)` }, keys[i % keys.length])),
    );
    results.forEach((res, i) => {
      assert.equal(res.status, 200);
      assert.equal(res.body.output, `${i * 2}\n`);
    });
  });

  it("keeps another account on time while one floods, and answers the flood's overflow 503 ACCOUNT_BUSY", async () => {
    // Default shares: 4 slots, so 2 running and 8 waiting per account; the 11th and 12th call are refused.
    const flood = Array.from({ length: 12 }, () => run({ code: 'import time\ntime.sleep(1)', timeout: 2 }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { apiKey: otherKey } = await server.createAccount('free', 0);
    const started = Date.now();
    const other = await run({ code: 'print("on time")' }, otherKey);
    const waited = Date.now() - started;
    assert.equal(other.status, 200, other.text);
    assert.equal(other.body.output, 'on time\n');
    assert.ok(waited < 1000, `the other account waited ${waited} ms`);
    const responses = await Promise.all(flood);
    assert.equal(responses.filter((res) => res.status === 200).length, 10);
    const refused = responses.filter((res) => res.status !== 200);
    assert.deepEqual(
      refused.map((res) => [res.status, res.body.code, res.body.details]),
      Array.from({ length: 2 }, () => [503, 'ACCOUNT_BUSY', { running: 2, queued: 8, max_running: 2, max_queued: 8 }]),
    );
    assert.match(refused[0]?.body.message ?? '', /^Your account's share of code execution is full/);
  });
});

describe('POST /z1/code/execute without bubblewrap', () => {
  it('answers 503 SANDBOX_UNAVAILABLE saying how to install it, and never runs the code', async () => {
    const server = await startTestServer('sqlite', { config: { sandbox: { bwrapPath: '/nonexistent/bwrap' } } });
    try {
      const { apiKey } = await server.createAccount('free');
      const res = await server.request('POST', '/z1/code/execute', {
        apiKey,
        body: { user_id: 'u', code: 'print(1)' },
      });
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 'SANDBOX_UNAVAILABLE');
      assert.match(String(res.body.message), /run scripts\/setup as root, or .*apt-get install bubblewrap/);
      const ready = await server.request<{ checks: Record<string, { ok: boolean }> }>('GET', '/z1/health/ready');
      assert.equal(ready.body.checks.sandbox?.ok, false);
    } finally {
      await server.close();
    }
  });
});
