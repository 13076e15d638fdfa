import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { ERROR_STATUS } from '../../src/errors/index.js';
import { contentCoding, parseJson } from '../../src/http/body.js';
import { loadContract } from '../../src/http/document.js';
import { findTooDeep } from '../../src/http/json-depth.js';
import { clientErrorOf } from '../../src/http/timeouts.js';

describe('findTooDeep', () => {
  it('counts containers, not scalars', () => {
    assert.equal(findTooDeep('{}', 1), undefined);
    assert.deepEqual(findTooDeep('{"a":{}}', 1), { path: 'a' });
    assert.equal(findTooDeep('{"a":[1,2,"x"]}', 2), undefined);
    assert.deepEqual(findTooDeep('[[[]]]', 2), { path: '[0][0]' });
  });

  it('names the path to the first container past the limit, as validation errors do', () => {
    const text = JSON.stringify({ tools: [{ a: 1 }, { function: { parameters: { p: { q: [0, [1]] } } } }] });
    assert.deepEqual(findTooDeep(text, 6), { path: 'tools[1].function.parameters.p.q' });
    assert.deepEqual(findTooDeep(text, 7), { path: 'tools[1].function.parameters.p.q[1]' });
    assert.deepEqual(findTooDeep('{"x":1,"y":{"z":[{},{"w":{}}]}}', 3), { path: 'y.z[0]' });
    assert.deepEqual(findTooDeep('{"x":1,"y":{"z":[{},{"w":{}}]}}', 4), { path: 'y.z[1].w' });
  });

  it('skips strings whole: brackets, escaped quotes and backslashes inside them are text', () => {
    assert.equal(
      findTooDeep(JSON.stringify({ a: '[[[{{{', b: 'say \\"[[[\\"', c: '\\\\', d: ['\\\\"'] }), 2),
      undefined,
    );
    assert.deepEqual(findTooDeep(JSON.stringify({ 'k"[{': { 'x\\': [{}] } }), 3), { path: 'k"[{.x\\[0]' });
  });

  it('decodes and shortens the keys it names', () => {
    const long = 'k'.repeat(100);
    assert.deepEqual(findTooDeep(`{"${long}":{"\\u00e9":[[]]}}`, 3), { path: `${'k'.repeat(32)}….é[0]` });
  });

  it('scans a megabyte of deeply nested text without recursion', () => {
    const text = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
    assert.deepEqual(findTooDeep(text, 64)?.path.slice(0, 9), '[0][0][0]');
    assert.equal(findTooDeep(text, 500_000), undefined);
  });

  it('only measures text that is not JSON, never throws on it', () => {
    assert.equal(findTooDeep('}}}]]]', 1), undefined);
    assert.equal(findTooDeep('{"unterminated', 1), undefined);
    assert.deepEqual(findTooDeep('{{', 1), { path: '?' });
  });
});

describe('the body reader', () => {
  it('knows gzip, x-gzip, deflate, br and identity, in any case, and refuses the rest with 415', () => {
    assert.equal(contentCoding(''), 'identity');
    assert.equal(contentCoding(' Identity '), 'identity');
    assert.equal(contentCoding('GZip'), 'gzip');
    assert.equal(contentCoding('x-gzip'), 'x-gzip');
    assert.equal(contentCoding('br'), 'br');
    for (const coding of ['zstd', 'gzip, br', 'compress', '__proto__', 'toString']) {
      assert.throws(
        () => contentCoding(coding),
        (err: { code?: string; status?: number }) => {
          return err.code === 'UNSUPPORTED_MEDIA_TYPE' && err.status === 415;
        },
      );
    }
  });

  it('parses objects and arrays, and refuses the rest, deep nesting and __proto__ with 400', () => {
    assert.deepEqual(parseJson(' {"a":[1]}', 64), { a: [1] });
    const code = (text: string) => {
      try {
        parseJson(text, 4);
        return 'parsed';
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    assert.equal(code('"text"'), 'INVALID_JSON');
    assert.equal(code('{"a":'), 'INVALID_JSON');
    assert.equal(code('{"__proto__":{}}'), 'INVALID_JSON');
    assert.equal(code('{"a":{"b":{"c":{"d":{}}}}}'), 'NESTING_TOO_DEEP');
    assert.equal(code('{"a":{"b":{"c":{}}}}'), 'parsed');
  });
});

describe('answers before the app', () => {
  const timeouts = { headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000 };
  const answer = (code: string) => {
    const err = clientErrorOf(Object.assign(new Error('x'), { code }), timeouts);
    return [err.status, err.code];
  };

  it("maps Node's client errors to the product's", () => {
    assert.deepEqual(answer('ERR_HTTP_REQUEST_TIMEOUT'), [408, 'REQUEST_TIMEOUT']);
    assert.deepEqual(answer('HPE_HEADER_OVERFLOW'), [431, 'HEADERS_TOO_LARGE']);
    assert.deepEqual(answer('HPE_CHUNK_EXTENSIONS_OVERFLOW'), [413, 'PAYLOAD_TOO_LARGE']);
    assert.deepEqual(answer('HPE_INVALID_METHOD'), [400, 'MALFORMED_REQUEST']);
    assert.deepEqual(answer('HPE_UNEXPECTED_CONTENT_LENGTH'), [400, 'MALFORMED_REQUEST']);
  });
});

describe('error codes', () => {
  it('are the ones the contract lists, every one of them', () => {
    const doc = loadContract().parse() as {
      components: { schemas: { Error: { properties: { code: { enum: string[] } } } } };
    };
    assert.deepEqual([...doc.components.schemas.Error.properties.code.enum].sort(), Object.keys(ERROR_STATUS).sort());
  });
});

describe('http and cors settings', () => {
  it('default to bounds of seconds, a depth of 64, connection caps from the descriptors and no CORS origin', () => {
    const config = loadConfig({});
    assert.deepEqual(config.http, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      bodyIdleTimeoutMs: 5_000,
      keepAliveTimeoutMs: 65_000,
      maxJsonDepth: 64,
      maxConnections: 'auto',
      maxConnectionsPerAddress: 256,
      connectionFdReserve: 256,
      streamWriteTimeoutMs: 60_000,
    });
    assert.deepEqual(config.cors, { origins: [] });
  });

  it('take partial overrides', () => {
    const config = loadConfig(
      {},
      { http: { bodyIdleTimeoutMs: 1000 }, cors: { origins: ['https://app.example.com', '*'] } },
    );
    assert.equal(config.http.bodyIdleTimeoutMs, 1000);
    assert.equal(config.http.requestTimeoutMs, 30_000);
    assert.deepEqual(config.cors.origins, ['https://app.example.com', '*']);
  });

  it('refuse deadlines that contradict each other, and origins that are not origins', () => {
    const refused = [
      { http: { headersTimeoutMs: 40_000 } },
      { http: { bodyIdleTimeoutMs: 60_000, requestTimeoutMs: 30_000 } },
      { http: { maxJsonDepth: 2 } },
      { http: { unknown: 1 } },
      { http: { maxConnections: 0 } },
      { http: { maxConnections: 'unlimited' } },
      { http: { maxConnectionsPerAddress: -1 } },
      { http: { streamWriteTimeoutMs: 0 } },
      { cors: { origins: ['https://app.example.com/'] } },
      { cors: { origins: ['https://App.example.com'] } },
      { cors: { origins: ['app.example.com'] } },
      { cors: { origins: ['ftp://app.example.com'] } },
    ];
    for (const overrides of refused) {
      assert.throws(() => loadConfig({}, overrides as never), ConfigError, JSON.stringify(overrides));
    }
  });
});
