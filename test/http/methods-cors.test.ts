import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadContract } from '../../src/http/document.js';
import { isErrorBody } from '../support/raw-http.js';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/server.js';

interface ContractPath {
  template: string;
  /** A concrete path: each parameter replaced by a sample value. */
  path: string;
  methods: string[];
  operations: Record<string, { operationId: string; security?: unknown[] }>;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Every path of the contract with its methods, from the document itself. */
function contractPaths(): ContractPath[] {
  const doc = loadContract().parse() as { paths: Record<string, Record<string, { operationId: string }>> };
  return Object.entries(doc.paths).map(([template, item]) => {
    // A path item also holds `parameters`, `summary`, `description`…: only the HTTP methods are operations.
    const operations = Object.fromEntries(Object.entries(item).filter(([method]) => HTTP_METHODS.has(method)));
    return {
      template,
      path: template.replace(/\{[^}]+\}/g, 'sample_1'),
      methods: Object.keys(operations).map((m) => m.toUpperCase()),
      operations,
    };
  });
}

/**
 * Headers that differ between two requests by nature, or concern the connection rather than the answer: a body
 * streamed in chunks (an end user's export) is framed `Transfer-Encoding: chunked`, which a HEAD answer, having
 * no body to frame, does not carry (RFC 9112 §6.1 allows either).
 */
const VOLATILE = new Set([
  'date',
  'x-request-id',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

function stableHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!VOLATILE.has(name)) out[name] = value;
  });
  return out;
}

describe('HEAD and OPTIONS', () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer('sqlite', {
      config: { tiers: { free: { rpm: 10_000, rpd: 10_000, monthly: 100_000 } } },
    });
    ({ apiKey } = await server.createAccount('free', 10));
  });
  after(() => server.close());

  const paths = contractPaths();
  // Reading the request logs is itself logged (written behind, a few ms later): a window closed before this suite's
  // first request is the one answer of /z1/logs that a GET and the HEAD after it must both see.
  const frozen: Record<string, string> = { '/z1/logs': `?end=${new Date(Date.now() - 60_000).toISOString()}` };

  for (const entry of paths.filter((p) => p.methods.includes('GET'))) {
    it(`HEAD ${entry.template} answers as GET does, without the body`, async () => {
      const operationId = entry.operations.get?.operationId ?? '';
      const auth = operationId.startsWith('admin') ? { admin: true } : { apiKey };
      const url = server.url + entry.path + (frozen[entry.template] ?? '');
      const get = await fetch(url, { headers: headersFor(auth) });
      const getBody = await get.arrayBuffer();
      const head = await fetch(url, { method: 'HEAD', headers: headersFor(auth) });
      assert.equal(head.status, get.status);
      assert.deepEqual(stableHeaders(head.headers), stableHeaders(get.headers));
      assert.equal((await head.arrayBuffer()).byteLength, 0);
      if (get.headers.get('content-length')) {
        assert.equal(head.headers.get('content-length'), String(getBody.byteLength));
      }
    });
  }

  function headersFor(auth: { admin?: boolean; apiKey?: string }): Record<string, string> {
    return { Authorization: `Bearer ${auth.admin ? ADMIN_TOKEN : auth.apiKey}` };
  }

  it('HEAD on an operation behind a key answers 401 without a key, with no body', async () => {
    const res = await fetch(`${server.url}/z1/models`, { method: 'HEAD' });
    assert.equal(res.status, 401);
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  });

  it('HEAD where the contract has no GET answers 405, allowing what the path does', async () => {
    const res = await fetch(`${server.url}/z1/chat/completions`, { method: 'HEAD' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'OPTIONS, POST');
  });

  for (const entry of paths) {
    const expected = [...entry.methods, ...(entry.methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].sort();
    it(`OPTIONS ${entry.template} answers 204 with Allow: ${expected.join(', ')}, without a key`, async () => {
      const res = await server.request('OPTIONS', entry.path);
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('allow'), expected.join(', '));
      assert.equal(res.text, '');
      assert.equal(res.headers.get('access-control-allow-origin'), null, 'no CORS unless configured');
    });
  }

  it('OPTIONS on a path the contract does not have answers 404 with the error body', async () => {
    const res = await server.request('OPTIONS', '/z1/nothing-here');
    assert.equal(res.status, 404);
    assert.ok(isErrorBody(res.text));
  });

  it('sends no CORS header by default, even to a preflight', async () => {
    const res = await server.request('OPTIONS', '/z1/chat/completions', {
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    assert.equal(res.status, 204);
    for (const name of [
      'access-control-allow-origin',
      'access-control-allow-methods',
      'access-control-allow-headers',
    ]) {
      assert.equal(res.headers.get(name), null, name);
    }
    const get = await server.request('GET', '/z1/models', { apiKey, headers: { Origin: 'https://app.example.com' } });
    assert.equal(get.headers.get('access-control-allow-origin'), null);
  });
});

describe('CORS with configured origins', () => {
  let server: TestServer;
  let apiKey: string;
  const APP = 'https://app.example.com';

  before(async () => {
    server = await startTestServer('sqlite', { config: { cors: { origins: [APP, 'http://localhost:3000'] } } });
    ({ apiKey } = await server.createAccount('free', 10));
  });
  after(() => server.close());

  it('answers a preflight from a listed origin with what it may send', async () => {
    const res = await server.request('OPTIONS', '/z1/chat/completions', {
      headers: {
        Origin: APP,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type',
      },
    });
    assert.equal(res.status, 204);
    assert.equal(res.headers.get('access-control-allow-origin'), APP);
    assert.equal(res.headers.get('access-control-allow-methods'), 'OPTIONS, POST');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const name of ['authorization', 'content-type', 'x-api-key', 'content-encoding'])
      assert.ok(allowed.includes(name), name);
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.equal(res.headers.get('access-control-allow-credentials'), null, 'keys are headers, never cookies');
    assert.match(res.headers.get('vary') ?? '', /Origin/);
  });

  it('gives a listed origin Access-Control-Allow-Origin on answers and on errors', async () => {
    const ok = await server.request('GET', '/z1/models', { apiKey, headers: { Origin: APP } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), APP);
    assert.match(ok.headers.get('access-control-expose-headers') ?? '', /X-RateLimit-Remaining/);
    assert.match(ok.headers.get('vary') ?? '', /Origin/);
    const unauthorized = await server.request('GET', '/z1/models', { headers: { Origin: APP } });
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers.get('access-control-allow-origin'), APP, 'a browser app can read the error');
    const invalid = await server.request('POST', '/z1/chat/completions', {
      apiKey,
      headers: { Origin: APP },
      rawBody: '{',
    });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.headers.get('access-control-allow-origin'), APP);
  });

  it('gives an origin that is not listed no CORS header, and still answers it', async () => {
    for (const origin of [
      'https://evil.example.com',
      'https://app.example.com.evil.example',
      'null',
      'https://APP.example.com',
    ]) {
      const preflight = await server.request('OPTIONS', '/z1/models', {
        headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(preflight.headers.get('access-control-allow-methods'), null, origin);
      const get = await server.request('GET', '/z1/models', { apiKey, headers: { Origin: origin } });
      assert.equal(get.status, 200);
      assert.equal(get.headers.get('access-control-allow-origin'), null, origin);
    }
  });
});

describe('CORS for any origin', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer('sqlite', { config: { cors: { origins: ['*'] } } });
  });
  after(() => server.close());

  it('answers every origin with Access-Control-Allow-Origin: *', async () => {
    const res = await server.request('GET', '/z1/health', { headers: { Origin: 'https://anywhere.example' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    const none = await server.request('GET', '/z1/health');
    assert.equal(none.headers.get('access-control-allow-origin'), null, 'not a CORS request: no header');
  });
});
