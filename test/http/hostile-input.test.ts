import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { isErrorBody, type RawExchange, rawExchange, requestHead } from '../support/raw-http.js';
import { ADMIN_TOKEN, chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * What a hostile client can send in a body, sent as one would: compressed garbage, zip bombs, lying and
 * truncated lengths, bytes that are not UTF-8, JSON nested thousands of levels deep in every free-form
 * field the contract has. Every answer is a 4xx with the error body, given before anything is
 * authenticated or stored, and the server keeps answering.
 */
const LIMIT = 64 * 1024;
const MAX_DEPTH = 64;

/** `{"a":{"a":…{}…}}`: `levels` objects inside one another (6 bytes a level: deep nesting for few bytes). */
function nestedObject(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

/** A JSON Schema whose `properties` nest `levels` schemas deep: what a tool's parameters look like. */
function nestedSchema(levels: number): string {
  return `${'{"type":"object","properties":{"a":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
}

/** A JSON body (text) with `inner` (JSON text) spliced in where `"@"` stands. */
function splice(template: Record<string, unknown>, inner: string): string {
  return JSON.stringify(template).replace('"@"', inner);
}

describe('hostile request bodies', () => {
  let server: TestServer;
  let apiKey: string;

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
  after(() => server.close());

  /** One POST over a raw socket; `body` is sent as given, after `headers`. */
  function post(path: string, headers: string[], body: Buffer | string, extra: { timeoutMs?: number } = {}) {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    return rawExchange(
      server.url,
      [
        requestHead('POST', path, ['Content-Type: application/json', `Content-Length: ${bytes.length}`, ...headers]),
        bytes,
      ],
      { responses: 1, timeoutMs: extra.timeoutMs ?? 5000 },
    );
  }

  function only(exchange: RawExchange) {
    assert.equal(exchange.responses.length, 1, `one response, got ${JSON.stringify(exchange)}`);
    const [response] = exchange.responses;
    assert.ok(response);
    assert.ok(isErrorBody(response.body), `the error body, got ${response.body}`);
    return { ...response, json: JSON.parse(response.body) as { code: string; details: Record<string, unknown> } };
  }

  async function assertHealthy() {
    const health = await server.request('GET', '/z1/health');
    assert.equal(health.status, 200);
  }

  describe('compressed bodies', () => {
    for (const coding of ['gzip', 'deflate', 'br', 'x-gzip', 'GZIP']) {
      it(`answers ${coding} garbage with 400 INVALID_ENCODING, before authentication`, async () => {
        const res = only(await post('/z1/chat/completions', [`Content-Encoding: ${coding}`], 'this is not compressed'));
        assert.equal(res.status, 400);
        assert.equal(res.json.code, 'INVALID_ENCODING');
        assert.equal(res.json.details.field, 'body');
      });
    }

    it('answers a gzip stream cut short with 400 INVALID_ENCODING', async () => {
      const whole = gzipSync(JSON.stringify(chatBody()));
      const res = only(await post('/z1/chat/completions', ['Content-Encoding: gzip'], whole.subarray(0, 20)));
      assert.equal(res.status, 400);
      assert.equal(res.json.code, 'INVALID_ENCODING');
    });

    it('reads gzip, deflate and br bodies that are what they say', async () => {
      const compressors = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };
      for (const [coding, compress] of Object.entries(compressors)) {
        const body = compress(JSON.stringify({ email: `${coding}@example.com`, tier: 'free' }));
        const exchange = await post(
          '/admin/accounts',
          [`Content-Encoding: ${coding}`, `Authorization: Bearer ${ADMIN_TOKEN}`],
          body,
        );
        assert.equal(exchange.responses[0]?.status, 201, `${coding}: ${exchange.responses[0]?.body}`);
      }
    });

    for (const coding of ['zstd', 'compress', 'gzip, gzip', 'gzip;q=1']) {
      it(`answers Content-Encoding "${coding}" with 415`, async () => {
        const res = only(
          await post('/z1/chat/completions', [`Content-Encoding: ${coding}`], JSON.stringify(chatBody())),
        );
        assert.equal(res.status, 415);
        assert.equal(res.json.code, 'UNSUPPORTED_MEDIA_TYPE');
      });
    }

    it('stops a zip bomb at the body limit: 413, without inflating the rest', async () => {
      // 50 MB of zeros in ~50 KB: under the limit as sent, 800 times over it once inflated.
      const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024), { level: 9 });
      assert.ok(bomb.length < LIMIT);
      const exchange = await post('/z1/chat/completions', ['Content-Encoding: gzip'], bomb);
      const res = only(exchange);
      assert.equal(res.status, 413);
      assert.equal(res.json.code, 'PAYLOAD_TOO_LARGE');
      assert.ok(exchange.ms < 2000, `answered in ${exchange.ms} ms`);
      await assertHealthy();
    });

    it('bounds the compressed bytes too: 413 for a compressed body over the limit', async () => {
      const noise = gzipSync(randomBytes(LIMIT * 2));
      assert.ok(noise.length > LIMIT);
      const res = only(await post('/z1/chat/completions', ['Content-Encoding: gzip'], noise));
      assert.equal(res.status, 413);
    });
  });

  describe('lying and truncated bodies', () => {
    it('answers a Content-Length over the limit with 413 at once, without reading the body', async () => {
      const exchange = await rawExchange(
        server.url,
        [
          requestHead('POST', '/z1/chat/completions', [
            'Content-Type: application/json',
            `Content-Length: ${LIMIT + 1}`,
          ]),
        ],
        { responses: 1, timeoutMs: 3000 },
      );
      const res = only(exchange);
      assert.equal(res.status, 413);
      assert.ok(exchange.ms < 300, `answered in ${exchange.ms} ms`);
    });

    it('lets a client still sending a body over the limit read its 413, instead of resetting it', async () => {
      const body = Buffer.alloc(4 * LIMIT, 'x');
      for (const headers of [[`Content-Length: ${body.length}`], ['Transfer-Encoding: chunked']]) {
        const chunked = headers[0] === 'Transfer-Encoding: chunked';
        const payload = chunked
          ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
          : body;
        const exchange = await rawExchange(
          server.url,
          [requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', ...headers]), payload],
          { responses: 1, timeoutMs: 5000 },
        );
        assert.equal(exchange.error, undefined, `no ${exchange.error} (${headers[0]})`);
        assert.equal(only(exchange).status, 413);
      }
    });

    it('answers a Content-Length longer than the body with 408 once the body stops arriving', async () => {
      const exchange = await rawExchange(
        server.url,
        [
          requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', 'Content-Length: 1000']),
          '{"model":',
        ],
        { timeoutMs: 5000 },
      );
      const res = only(exchange);
      assert.equal(res.status, 408);
      assert.equal(res.json.code, 'REQUEST_TIMEOUT');
      assert.equal(res.headers.connection, 'close');
      assert.ok(exchange.closedByServer, 'the server closes the connection');
      assert.ok(exchange.ms >= 350 && exchange.ms < 2000, `after the 400 ms pause limit, took ${exchange.ms} ms`);
    });

    it('answers a body cut short by the client closing its side with 400 MALFORMED_REQUEST', async () => {
      const exchange = await rawExchange(server.url, [
        requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', 'Content-Length: 1000']),
        '{"model":',
        { end: true },
      ]);
      const res = only(exchange);
      assert.equal(res.status, 400);
      assert.equal(res.json.code, 'MALFORMED_REQUEST');
    });

    it('answers a Content-Length shorter than the body: the body as cut is not JSON, the rest not HTTP', async () => {
      const exchange = await rawExchange(server.url, [
        requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', 'Content-Length: 5']),
        JSON.stringify(chatBody()),
      ]);
      assert.ok(exchange.responses.length >= 1);
      for (const response of exchange.responses) {
        assert.equal(response.status, 400);
        assert.ok(isErrorBody(response.body), response.body);
      }
    });

    it('answers a chunked body with a bad chunk size with 400 MALFORMED_REQUEST', async () => {
      const exchange = await rawExchange(server.url, [
        requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', 'Transfer-Encoding: chunked']),
        'zz\r\n{}\r\n0\r\n\r\n',
      ]);
      assert.equal(only(exchange).json.code, 'MALFORMED_REQUEST');
    });

    it('answers Content-Length beside Transfer-Encoding (request smuggling) with 400 MALFORMED_REQUEST', async () => {
      const exchange = await rawExchange(server.url, [
        requestHead('POST', '/z1/chat/completions', [
          'Content-Type: application/json',
          'Content-Length: 4',
          'Transfer-Encoding: chunked',
        ]),
        '0\r\n\r\nGET /z1/health HTTP/1.1\r\nHost: x\r\n\r\n',
      ]);
      assert.equal(exchange.responses.length, 1, 'the smuggled request is never answered');
      assert.equal(only(exchange).json.code, 'MALFORMED_REQUEST');
    });

    it('answers bytes that are not UTF-8 with 400 INVALID_JSON', async () => {
      const body = Buffer.concat([Buffer.from('{"model":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
      const res = only(await post('/z1/chat/completions', [], body));
      assert.equal(res.status, 400);
      assert.equal(res.json.code, 'INVALID_JSON');
    });

    it('still refuses a __proto__ key with 400 INVALID_JSON', async () => {
      const res = only(await post('/z1/chat/completions', [], '{"__proto__":{"admin":true}}'));
      assert.equal(res.json.code, 'INVALID_JSON');
    });

    it('answers a body that is JSON but not an object or array with 400 INVALID_JSON', async () => {
      for (const text of ['"a string"', '42', 'null', '   ']) {
        const res = only(await post('/z1/chat/completions', [], text));
        assert.equal(res.json.code, 'INVALID_JSON', text);
      }
    });
  });

  describe('HTTP the app never sees', () => {
    const cases: Array<[string, string, number, string]> = [
      ['a method that is not a token', 'G ET /z1/health HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'MALFORMED_REQUEST'],
      ['an HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400, 'MALFORMED_REQUEST'],
      [
        'a header line without a colon',
        'GET /z1/health HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n',
        400,
        'MALFORMED_REQUEST',
      ],
      [
        'headers over 16 KiB',
        `GET /z1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17_000)}\r\n\r\n`,
        431,
        'HEADERS_TOO_LARGE',
      ],
      [
        'CONNECT (this is no proxy)',
        'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
        405,
        'METHOD_NOT_ALLOWED',
      ],
    ];
    for (const [name, bytes, status, code] of cases) {
      it(`answers ${name} with ${status} ${code} and the error body, then closes`, async () => {
        const exchange = await rawExchange(server.url, [bytes]);
        const res = only(exchange);
        assert.equal(res.status, status);
        assert.equal(res.json.code, code);
        assert.equal(res.headers.connection, 'close');
        assert.ok(exchange.closedByServer);
      });
    }
  });

  describe('deep nesting in every free-form field', () => {
    const deep = 6000;
    const cases: Array<{
      name: string;
      method: 'POST' | 'PATCH';
      path: string;
      body: (inner: string) => string;
      field: string;
    }> = [
      {
        name: 'chat tools[].function.parameters',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) =>
          splice(chatBody({ tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }), inner),
        field: 'tools[0].function.parameters',
      },
      {
        name: 'chat tools[].function.parameters, with skip_cache',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) =>
          splice(
            chatBody({ skip_cache: true, tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }),
            inner,
          ),
        field: 'tools[0].function.parameters',
      },
      {
        name: 'chat response_format.json_schema',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) => splice(chatBody({ response_format: { type: 'json_schema', json_schema: '@' } }), inner),
        field: 'response_format.json_schema',
      },
      {
        name: 'memory metadata (create)',
        method: 'POST',
        path: '/z1/memory',
        body: (inner) => splice({ user_id: 'u', content: 'c', metadata: '@' }, inner),
        field: 'metadata',
      },
      {
        name: 'memory metadata (update)',
        method: 'PATCH',
        path: '/z1/memory/mem_1',
        body: (inner) => splice({ metadata: '@' }, inner),
        field: 'metadata',
      },
      {
        name: 'document metadata',
        method: 'POST',
        path: '/z1/rag/documents',
        body: (inner) => splice({ user_id: 'u', content: 'c', metadata: '@' }, inner),
        field: 'metadata',
      },
      {
        name: 'an unknown field',
        method: 'POST',
        path: '/z1/chat/completions',
        body: (inner) => splice(chatBody({ extra: '@' }), inner),
        field: 'extra',
      },
    ];

    for (const c of cases) {
      it(`answers ${c.name} nested ${deep} levels with 400 NESTING_TOO_DEEP naming the field`, async () => {
        const text = c.body(nestedObject(deep));
        assert.ok(text.length < 80 * 1024);
        const res = await server.request(c.method, c.path, { apiKey, rawBody: text });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'NESTING_TOO_DEEP');
        const details = res.body.details as { field: string; max_depth: number };
        assert.ok(details.field.startsWith(`${c.field}.a`), details.field);
        assert.equal(details.max_depth, MAX_DEPTH);
      });
    }

    it('refuses the deep body before authentication: 400 without a key, not 401', async () => {
      const res = await server.request('POST', '/z1/chat/completions', {
        rawBody: splice(
          chatBody({ tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }),
          nestedObject(deep),
        ),
      });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 'NESTING_TOO_DEEP');
    });

    it('refuses arrays nested at the root', async () => {
      const res = only(await post('/z1/chat/completions', [], `${'['.repeat(deep)}${']'.repeat(deep)}`));
      assert.equal(res.json.code, 'NESTING_TOO_DEEP');
      assert.match(String(res.json.details.field), /^\[0\]\[0\]/);
    });

    it(`accepts ${MAX_DEPTH} levels and refuses ${MAX_DEPTH + 1}, counted from the body's root`, async () => {
      // {"user_id","content","metadata": …}: the body is level 1, metadata's object level 2.
      const body = (levels: number) => splice({ user_id: 'u', content: 'c', metadata: '@' }, nestedObject(levels));
      const within = await server.request('POST', '/z1/memory', { apiKey, rawBody: body(MAX_DEPTH - 1) });
      assert.equal(within.status, 201, 'past the body reader and validation, stored');
      const past = await server.request('POST', '/z1/memory', { apiKey, rawBody: body(MAX_DEPTH) });
      assert.equal(past.status, 400);
      assert.equal(past.body.code, 'NESTING_TOO_DEEP');
    });

    it('accepts a tool whose schema nests 20 levels, as real tools never do', async () => {
      const res = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        rawBody: splice(
          chatBody({ max_tokens: 2, tools: [{ type: 'function', function: { name: 'f', parameters: '@' } }] }),
          nestedSchema(20),
        ),
      });
      assert.notEqual(res.body.code, 'NESTING_TOO_DEEP');
      assert.ok(res.status < 500, res.text);
    });

    it('counts brackets inside strings as text, not nesting', async () => {
      const res = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'u', content: `${'[{'.repeat(3000)}"\\`, metadata: { note: '{'.repeat(500) } },
      });
      assert.equal(res.status, 201, res.text);
    });
  });

  it('has answered no request with a 5xx, and is healthy', async () => {
    await assertHealthy();
    const rows = await server.usageRows<{ status: number; endpoint: string }>(
      'SELECT status, endpoint FROM usage_records WHERE status >= 500',
      [],
    );
    assert.deepEqual(rows, []);
  });
});
