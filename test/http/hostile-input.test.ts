import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { isErrorBody, rawExchange, requestHead } from '../support/raw-http.js';
import { ADMIN_TOKEN, chatBody } from '../support/server.js';
import { hostileServer, LIMIT } from './hostile-server.js';

/**
 * What a hostile client can send in a body, sent as one would: compressed garbage, zip bombs, lying and
 * truncated lengths, bytes that are not UTF-8, HTTP the app never sees (JSON nested thousands of levels deep
 * is in hostile-nesting.test.ts). Every answer is a 4xx with the error body, given before anything is
 * authenticated or stored, and the server keeps answering.
 */
describe('hostile request bodies', () => {
  const hostile = hostileServer();
  const { post, only, assertHealthy } = hostile;

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
        hostile.server.url,
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
          hostile.server.url,
          [requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', ...headers]), payload],
          { responses: 1, timeoutMs: 5000 },
        );
        assert.equal(exchange.error, undefined, `no ${exchange.error} (${headers[0]})`);
        assert.equal(only(exchange).status, 413);
      }
    });

    it('answers a Content-Length longer than the body with 408 once the body stops arriving', async () => {
      const exchange = await rawExchange(
        hostile.server.url,
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
      const exchange = await rawExchange(hostile.server.url, [
        requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', 'Content-Length: 1000']),
        '{"model":',
        { end: true },
      ]);
      const res = only(exchange);
      assert.equal(res.status, 400);
      assert.equal(res.json.code, 'MALFORMED_REQUEST');
    });

    it('answers a Content-Length shorter than the body: the body as cut is not JSON, the rest not HTTP', async () => {
      const exchange = await rawExchange(hostile.server.url, [
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
      const exchange = await rawExchange(hostile.server.url, [
        requestHead('POST', '/z1/chat/completions', ['Content-Type: application/json', 'Transfer-Encoding: chunked']),
        'zz\r\n{}\r\n0\r\n\r\n',
      ]);
      assert.equal(only(exchange).json.code, 'MALFORMED_REQUEST');
    });

    it('answers Content-Length beside Transfer-Encoding (request smuggling) with 400 MALFORMED_REQUEST', async () => {
      const exchange = await rawExchange(hostile.server.url, [
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
        const exchange = await rawExchange(hostile.server.url, [bytes]);
        const res = only(exchange);
        assert.equal(res.status, status);
        assert.equal(res.json.code, code);
        assert.equal(res.headers.connection, 'close');
        assert.ok(exchange.closedByServer);
      });
    }
  });

  it('has answered no request with a 5xx, and is healthy', async () => {
    await hostile.assertNoServerErrors();
  });
});
