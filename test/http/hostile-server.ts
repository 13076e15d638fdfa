import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { isErrorBody, type RawExchange, rawExchange, requestHead } from '../support/raw-http.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** The body limit of the hostile-input server: small, so that bodies over it cost little to send. */
export const LIMIT = 64 * 1024;

export interface HostileServer {
  readonly server: TestServer;
  /** A key of an enterprise account with room for every request of a suite. */
  readonly apiKey: string;
  /** One POST over a raw socket; `body` is sent as given, after `headers`. */
  post(path: string, headers: string[], body: Buffer | string, extra?: { timeoutMs?: number }): Promise<RawExchange>;
  /** The one response of an exchange, which must carry the error body, with that body parsed. */
  only(exchange: RawExchange): RawExchange['responses'][number] & {
    json: { code: string; details: Record<string, unknown> };
  };
  assertHealthy(): Promise<void>;
  /** Health answers 200 and no request of the suite was answered with a 5xx. */
  assertNoServerErrors(): Promise<void>;
}

/**
 * Registers, in the calling describe, the server the hostile-input suites send to: started before their tests,
 * closed after them. `checkAtClose` asserts no 5xx was answered before closing it, for a suite that has no test
 * of its own saying so.
 */
export function hostileServer(options: { checkAtClose?: boolean } = {}): HostileServer {
  let server: TestServer | undefined;
  let apiKey: string | undefined;
  const running = () => server ?? assert.fail('the hostile-input server is not started');

  before(async () => {
    server = await startTestServer('sqlite', {
      config: {
        bodyLimitBytes: LIMIT,
        http: { bodyIdleTimeoutMs: 400, requestTimeoutMs: 5000, headersTimeoutMs: 2000 },
        tiers: { enterprise: { rpm: 10_000, rpd: 10_000, monthly: 100_000 } },
      },
    });
    ({ apiKey } = await server.createAccount('enterprise', 1000));
  });
  after(async () => {
    try {
      if (options.checkAtClose) await hostile.assertNoServerErrors();
    } finally {
      await server?.close();
    }
  });

  const hostile: HostileServer = {
    get server() {
      return running();
    },
    get apiKey() {
      return apiKey ?? assert.fail('the hostile-input server is not started');
    },
    post(path, headers, body, extra = {}) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      return rawExchange(
        running().url,
        [
          requestHead('POST', path, ['Content-Type: application/json', `Content-Length: ${bytes.length}`, ...headers]),
          bytes,
        ],
        { responses: 1, timeoutMs: extra.timeoutMs ?? 5000 },
      );
    },
    only(exchange) {
      assert.equal(exchange.responses.length, 1, `one response, got ${JSON.stringify(exchange)}`);
      const [response] = exchange.responses;
      assert.ok(response);
      assert.ok(isErrorBody(response.body), `the error body, got ${response.body}`);
      return { ...response, json: JSON.parse(response.body) as { code: string; details: Record<string, unknown> } };
    },
    async assertHealthy() {
      const health = await running().request('GET', '/z1/health');
      assert.equal(health.status, 200);
    },
    async assertNoServerErrors() {
      await hostile.assertHealthy();
      const rows = await running().usageRows<{ status: number; endpoint: string }>(
        'SELECT status, endpoint FROM usage_records WHERE status >= 500',
        [],
      );
      assert.deepEqual(rows, []);
    },
  };
  return hostile;
}
