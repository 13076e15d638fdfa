/**
 * The fuzz stage of .ci/run: a seeded generator of malformed HTTP against a running pvai server, over
 * raw TCP sockets so that framing can be broken as well as bodies, encodings, headers and methods.
 * Schemathesis sends what the contract describes, valid or not; this sends what no client library
 * would: lying lengths, broken chunking, request smuggling, compressed garbage, zip bombs, JSON nested
 * thousands of levels deep, repeated and ambiguous credentials, bytes that are not HTTP, slow clients.
 *
 *   node --import tsx scripts/fuzz/malformed-http.ts [--seed N] [--requests N] [--concurrency N]
 *                                                     [--server-log FILE] [--only CASE] [--show]
 *
 * Needs PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN (scripts/contract/serve-for-contract.mjs sets them).
 * Every case is made from the seed and its number alone, so `--only N --show` replays and prints case N
 * of a run. It passes (exit 0) when:
 *   - no response is a 5xx, but the documented 503 of a capability this server does not have yet;
 *   - every error response (4xx, 5xx) but those to HEAD carries the error body
 *     {status: "error", message, code, details} - the server's own pre-routing answers included;
 *   - no connection is left hanging (no answer and not closed within the deadlines);
 *   - afterwards the server is healthy: liveness, readiness, an authenticated chat completion, usage;
 *   - with --server-log, the server logged nothing at level error or above while it ran.
 */
import { readFileSync } from 'node:fs';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { parse as parseYaml } from 'yaml';
import { isErrorBody, type RawExchange, rawExchange, type Step } from '../../test/support/raw-http.js';

// ------------------------------------------------------------------------------------------------ setup

interface Options {
  seed: number;
  requests: number;
  concurrency: number;
  serverLog: string | undefined;
  only: number | undefined;
  show: boolean;
}

function options(argv: string[]): Options {
  const out: Options = { seed: 1, requests: 3000, concurrency: 16, serverLog: undefined, only: undefined, show: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--seed') out.seed = Number(value());
    else if (arg === '--requests') out.requests = Number(value());
    else if (arg === '--concurrency') out.concurrency = Number(value());
    else if (arg === '--server-log') out.serverLog = value();
    else if (arg === '--only') out.only = Number(value());
    else if (arg === '--show') out.show = true;
    else throw new Error(`unknown argument ${arg}`);
  }
  for (const [name, v] of Object.entries({ seed: out.seed, requests: out.requests, concurrency: out.concurrency })) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${name} must be a non-negative integer`);
  }
  return out;
}

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run this through scripts/contract/serve-for-contract.mjs)`);
  return value;
};

// ------------------------------------------------------------------------------------------------ randomness

/** mulberry32: a small, fast, seeded PRNG; good enough to pick cases, and the same on every machine. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  readonly #next: () => number;
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }
  float(): number {
    return this.#next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.#next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.#next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.#next() * items.length)] as T;
  }
  /** One of the keys, with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    let r = this.#next() * entries.reduce((sum, [, w]) => sum + w, 0);
    for (const [key, w] of entries) {
      r -= w;
      if (r < 0) return key;
    }
    return (entries[entries.length - 1] as [K, number])[0];
  }
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.#next() * 256);
    return out;
  }
}

/** Each case's own generator: from the run's seed and the case's number, whatever the concurrency. */
const caseRng = (seed: number, index: number) => new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);

// ------------------------------------------------------------------------------------------------ the target

interface Operation {
  method: string;
  path: string;
  operationId: string;
  admin: boolean;
  body: (() => Record<string, unknown>) | undefined;
}

interface Target {
  url: string;
  apiKey: string;
  adminToken: string;
  /** An account of its own for the admin operations' paths, so the one behind PVAI_API_KEY keeps its tier. */
  victimAccountId: string;
  operations: Operation[];
  zipBomb: Buffer;
}

/** A valid body per operation; the fuzzer breaks them. Code execution stays invalid (timeout 0) unless mutated. */
const BODIES: Record<string, (n: number) => Record<string, unknown>> = {
  createChatCompletion: () => ({
    model: 'PV-TURBO',
    user_id: 'fuzz',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 8,
  }),
  executeCode: () => ({ code: 'print(1)', user_id: 'fuzz', timeout: 0 }),
  createMemory: () => ({ user_id: 'fuzz', content: 'likes tea', metadata: { source: 'fuzz' } }),
  updateMemory: () => ({ content: 'likes coffee', metadata: { n: 1 } }),
  searchMemories: () => ({ user_id: 'fuzz', query: 'tea', k: 3 }),
  createDocument: () => ({ user_id: 'fuzz', title: 'doc', content: 'text', metadata: { a: [1, 2] } }),
  searchDocuments: () => ({ user_id: 'fuzz', query: 'text', k: 3 }),
  adminCreateAccount: (n) => ({ email: `fuzz-${n}@example.com`, tier: 'free', credits: 1 }),
  adminUpdateAccount: () => ({ tier: 'startup' }),
  adminAddCredits: () => ({ amount: 1 }),
  adminCreateKey: () => ({ name: 'fuzz' }),
};

function contractOperations(victimAccountId: string): Operation[] {
  const doc = parseYaml(readFileSync(new URL('../../openapi/openapi.yaml', import.meta.url), 'utf8')) as {
    paths: Record<string, Record<string, { operationId?: string; security?: Array<Record<string, unknown>> }>>;
  };
  const samples: Record<string, string> = {
    model_id: 'PV-TURBO',
    memory_id: 'mem_fuzz',
    document_id: 'doc_fuzz',
    account_id: victimAccountId,
    key_id: 'key_fuzz',
  };
  const out: Operation[] = [];
  let n = 0;
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters' || !op.operationId) continue;
      const operationId = op.operationId;
      const make = BODIES[operationId];
      out.push({
        method: method.toUpperCase(),
        path: template.replace(/\{([^}]+)\}/g, (_, name: string) => samples[name] ?? 'x'),
        operationId,
        admin: (op.security ?? []).some((s) => 'AdminToken' in s),
        body: make ? () => make(n++) : undefined,
      });
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ cases

interface Case {
  index: number;
  kind: string;
  /** What was done, for the report. */
  label: string;
  steps: Step[];
  head: boolean;
  /** How many responses a well-behaved server gives (the exchange ends early once it has them). */
  responses: number;
  timeoutMs: number;
}

const CRLF = '\r\n';
const DEFAULT_TIMEOUT_MS = 20_000;

function nested(levels: number, rng: Rng): string {
  const array = rng.chance(0.3);
  return array
    ? `${'['.repeat(levels)}${']'.repeat(levels)}`
    : `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
}

function randomJsonValue(rng: Rng): string {
  return rng.pick([
    'null',
    'true',
    '0',
    '-0',
    '1e400',
    '-1e-400',
    '9007199254740993',
    '3.14159',
    '""',
    JSON.stringify('x'.repeat(rng.int(1, 5000))),
    '"\\ud800"',
    '"\\u0000"',
    '[]',
    '{}',
    '[1,"a",null]',
    '{"__proto__":{"x":1}}',
    '{"constructor":{"prototype":{"x":1}}}',
    nested(rng.pick([10, 63, 64, 65, 300, 6000]), rng),
  ]);
}

/** A body's bytes: valid JSON, mutated as JSON, or corrupted as text. */
function bodyBytes(op: Operation, rng: Rng, notes: string[]): Buffer {
  const text = bodyText(op, rng, notes);
  return typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
}

function bodyText(op: Operation, rng: Rng, notes: string[]): string | Buffer {
  const valid = op.body ? op.body() : { anything: 'at all' };
  const mutation = rng.weighted({
    none: 25,
    dropKey: 8,
    replaceValue: 20,
    addKey: 6,
    deep: 14,
    proto: 3,
    duplicateKey: 3,
    huge: 3,
    truncate: 6,
    garbage: 4,
    invalidUtf8: 3,
    notAnObject: 3,
    empty: 2,
  });
  notes.push(`body:${mutation}`);
  const keys = Object.keys(valid);
  const text = JSON.stringify(valid);
  const withValue = (key: string, value: string) => {
    const others = JSON.stringify(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key)));
    return `${others.slice(0, -1)}${others.length > 2 ? ',' : ''}${JSON.stringify(key)}:${value}}`;
  };
  switch (mutation) {
    case 'none':
      return text;
    case 'dropKey': {
      const key = rng.pick(keys);
      return JSON.stringify(Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key)));
    }
    case 'replaceValue':
      return withValue(rng.pick(keys), randomJsonValue(rng));
    case 'addKey':
      return withValue(
        rng.pick(['extra', 'tools', 'response_format', 'metadata', 'stream', 'Model']),
        randomJsonValue(rng),
      );
    case 'deep': {
      const field = rng.pick(['tools', 'response_format', 'metadata', 'messages', ...keys]);
      const levels = rng.pick([32, 62, 63, 64, 65, 100, 1000, 6000, 20000]);
      notes.push(`depth:${levels}@${field}`);
      const inner = nested(levels, rng);
      if (field === 'tools') {
        return withValue('tools', `[{"type":"function","function":{"name":"f","parameters":${inner}}}]`);
      }
      if (field === 'response_format') return withValue(field, `{"type":"json_schema","json_schema":${inner}}`);
      return withValue(field, inner);
    }
    case 'proto':
      return `{"__proto__":{"polluted":true},${text.slice(1)}`;
    case 'duplicateKey':
      return `${text.slice(0, -1)},${JSON.stringify(rng.pick(keys))}:${randomJsonValue(rng)}}`;
    case 'huge':
      return withValue(rng.pick(keys), JSON.stringify('y'.repeat(rng.pick([100_000, 1_000_000, 1_100_000]))));
    case 'truncate':
      return text.slice(0, rng.int(0, Math.max(0, text.length - 1)));
    case 'garbage':
      return rng.bytes(rng.int(1, 200));
    case 'invalidUtf8':
      return Buffer.concat([Buffer.from(text.slice(0, -2)), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from('"}')]);
    case 'notAnObject':
      return rng.pick(['"text"', '42', 'null', 'true', '   ', '\ufeff{}', '{} {}', '[]']);
    default:
      return '';
  }
}

/** The body's bytes, encoded one way or another, and the Content-Encoding header to send with them. */
function encode(raw: Buffer, rng: Rng, target: Target, notes: string[]): { bytes: Buffer; coding: string | undefined } {
  const how = rng.weighted({
    identity: 62,
    gzip: 7,
    deflate: 4,
    br: 4,
    garbage: 6,
    truncated: 4,
    mislabelled: 3,
    unsupported: 4,
    stacked: 2,
    zipBomb: 2,
    oddCase: 2,
  });
  notes.push(`encoding:${how}`);
  switch (how) {
    case 'identity':
      return { bytes: raw, coding: rng.chance(0.1) ? 'identity' : undefined };
    case 'gzip':
      return { bytes: gzipSync(raw), coding: rng.pick(['gzip', 'x-gzip']) };
    case 'deflate':
      return { bytes: deflateSync(raw), coding: 'deflate' };
    case 'br':
      return { bytes: brotliCompressSync(raw), coding: 'br' };
    case 'garbage':
      return { bytes: rng.bytes(rng.int(0, 300)), coding: rng.pick(['gzip', 'deflate', 'br']) };
    case 'truncated': {
      const full = gzipSync(raw);
      return { bytes: full.subarray(0, rng.int(1, Math.max(1, full.length - 1))), coding: 'gzip' };
    }
    case 'mislabelled':
      return { bytes: brotliCompressSync(raw), coding: rng.pick(['gzip', 'deflate']) };
    case 'unsupported':
      return { bytes: raw, coding: rng.pick(['zstd', 'compress', 'x-compress', 'gzip;q=1', 'chunked', '*', '']) };
    case 'stacked':
      return { bytes: gzipSync(gzipSync(raw)), coding: rng.pick(['gzip, gzip', 'gzip,gzip', 'br, gzip']) };
    case 'zipBomb':
      return { bytes: target.zipBomb, coding: 'gzip' };
    default:
      return { bytes: gzipSync(raw), coding: rng.pick(['GZIP', ' gzip ', 'Gzip\t']) };
  }
}

/** Credentials, right, wrong, missing, repeated or ambiguous. */
function authHeaders(op: Operation, target: Target, rng: Rng, notes: string[]): string[] {
  const right = op.admin ? target.adminToken : target.apiKey;
  const wrong = `pv_sk_${'F'.repeat(40)}`;
  const how = rng.weighted({
    right: 55,
    apiKeyHeader: 8,
    none: 8,
    wrong: 6,
    both: 5,
    bothSame: 3,
    twice: 5,
    garbage: 4,
  });
  notes.push(`auth:${how}`);
  switch (how) {
    case 'right':
      return [`Authorization: Bearer ${right}`];
    case 'apiKeyHeader':
      return [`X-API-Key: ${right}`];
    case 'none':
      return [];
    case 'wrong':
      return [`Authorization: Bearer ${wrong}`];
    case 'both':
      return rng.chance(0.5)
        ? [`Authorization: Bearer ${right}`, `X-API-Key: ${wrong}`]
        : [`Authorization: Bearer ${wrong}`, `X-API-Key: ${right}`];
    case 'bothSame':
      return [`Authorization: Bearer ${right}`, `X-API-Key: ${right}`];
    case 'twice':
      return [`Authorization: Bearer ${right}`, `Authorization: Bearer ${rng.chance(0.5) ? right : wrong}`];
    default:
      return [
        rng.pick([
          'Authorization: Basic Zm9vOmJhcg==',
          'Authorization: Bearer',
          'Authorization: ',
          `X-API-Key: ${'k'.repeat(5000)}`,
        ]),
      ];
  }
}

/** Assorted other headers: content types, CORS, request ids, expectations, upgrades. */
function extraHeaders(rng: Rng, notes: string[]): string[] {
  const out: string[] = [];
  const n = rng.weighted({ 0: 60, 1: 25, 2: 10, 3: 5 });
  for (let i = 0; i < Number(n); i++) {
    const h = rng.pick([
      'Origin: https://evil.example',
      'Access-Control-Request-Method: POST',
      `X-Request-Id: ${rng.pick(['fuzz-1', 'x'.repeat(300), '../../etc', '\u00e9t\u00e9'])}`,
      'Expect: 100-continue',
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Accept-Encoding: gzip, br',
      'X-Forwarded-For: 1.2.3.4',
      `X-Long: ${'v'.repeat(rng.pick([100, 8000]))}`,
      'Content-Type: text/plain',
    ]);
    out.push(h);
    notes.push(`header:${h.slice(0, 24)}`);
  }
  return out;
}

/** A request line's path: the operation's, or a broken one. */
function requestPath(op: Operation, rng: Rng, notes: string[]): string {
  const how = rng.weighted({ same: 78, query: 8, weird: 14 });
  if (how === 'same') return op.path;
  notes.push(`path:${how}`);
  if (how === 'query') {
    return `${op.path}?${rng.pick([
      'start=2026-11-01T00:00:00%2B99:99',
      'start=0000-01-01',
      'end=9999-12-31T23:59:59-14:00',
      'group_by=everything',
      'user_id=',
      `user_id=${'u'.repeat(300)}`,
      'a[b][c][d][e][f][g][h][i][j]=1',
      `${'x=1&'.repeat(2000)}`,
      'window=%ZZ',
      '%',
    ])}`;
  }
  return rng.pick([
    `${op.path}/`,
    `${op.path}//x`,
    `${op.path}%00`,
    '/z1/../admin/accounts',
    '/%2e%2e/%2e%2e/etc/passwd',
    `/z1/models/${'m'.repeat(5000)}`,
    '/z1/mod%els',
    '*',
    'http://127.0.0.1/z1/health',
    '/z1/health?x=\u00e9',
    '/docs/assets/swagger-ui.css',
    '/docs/assets/../../package.json',
  ]);
}

/** A request line, headers and body assembled with the framing the case calls for. */
function framed(
  method: string,
  path: string,
  headers: string[],
  body: Buffer | undefined,
  rng: Rng,
  notes: string[],
): { steps: Step[]; responses: number; timeoutMs: number } {
  const how = rng.weighted({
    contentLength: 60,
    chunked: 12,
    clShorter: 3,
    clLongerEnd: 3,
    clLongerStall: 1,
    noLength: 3,
    clAndTe: 3,
    twoLengths: 2,
    oddLength: 3,
    badChunk: 3,
    chunkExtension: 2,
    oddTransferEncoding: 2,
    bareLf: 2,
    http10: 2,
  });
  notes.push(`framing:${how}`);
  const data = body ?? Buffer.alloc(0);
  // After a request asking to upgrade, Node hands the bytes that follow to the upgrade (there is none
  // here, so they are ignored) instead of parsing them as the next request.
  const upgrade = headers.some((h) => /^upgrade:/i.test(h));
  const head = (lines: string[], eol = CRLF, version = 'HTTP/1.1') =>
    `${method} ${path} ${version}${eol}Host: 127.0.0.1${eol}${lines.map((l) => `${l}${eol}`).join('')}${eol}`;
  const close = 'Connection: close';
  const one = { responses: 1, timeoutMs: DEFAULT_TIMEOUT_MS };
  const chunks = (bytes: Buffer, extension = '') => {
    const parts: Buffer[] = [];
    let offset = 0;
    while (offset < bytes.length) {
      const size = Math.min(bytes.length - offset, rng.int(1, 4096));
      parts.push(
        Buffer.from(`${size.toString(16)}${extension}${CRLF}`),
        bytes.subarray(offset, offset + size),
        Buffer.from(CRLF),
      );
      offset += size;
    }
    parts.push(Buffer.from(`0${CRLF}${CRLF}`));
    return Buffer.concat(parts);
  };
  switch (how) {
    case 'contentLength':
      return { steps: [head([...headers, `Content-Length: ${data.length}`, close]), data], ...one };
    case 'chunked':
      return { steps: [head([...headers, 'Transfer-Encoding: chunked', close]), chunks(data)], ...one };
    case 'clShorter': {
      const length = Math.max(0, data.length - rng.int(1, 20));
      return {
        steps: [head([...headers, `Content-Length: ${length}`]), data],
        // The bytes past the announced length are read as the next request, when there are any.
        responses: data.length > length && !upgrade ? 2 : 1,
        timeoutMs: DEFAULT_TIMEOUT_MS,
      };
    }
    case 'clLongerEnd':
      return {
        steps: [head([...headers, `Content-Length: ${data.length + rng.int(1, 500)}`]), data, { end: true }],
        ...one,
      };
    case 'clLongerStall':
      return { steps: [head([...headers, `Content-Length: ${data.length + rng.int(1, 500)}`]), data], ...one };
    case 'noLength':
      return {
        steps: [head([...headers]), data],
        responses: data.length > 0 && !upgrade ? 2 : 1,
        timeoutMs: DEFAULT_TIMEOUT_MS,
      };
    case 'clAndTe':
      return {
        steps: [
          head([...headers, `Content-Length: ${data.length}`, 'Transfer-Encoding: chunked', close]),
          chunks(data),
        ],
        ...one,
      };
    case 'twoLengths':
      return {
        steps: [
          head([...headers, `Content-Length: ${data.length}`, `Content-Length: ${data.length + 1}`, close]),
          data,
        ],
        ...one,
      };
    case 'oddLength': {
      const value = rng.pick([
        `+${data.length}`,
        ` ${data.length} `,
        `0x${data.length.toString(16)}`,
        '-1',
        '99999999999999999999',
        `${data.length}, ${data.length}`,
        'abc',
      ]);
      return { steps: [head([...headers, `Content-Length: ${value}`, close]), data], ...one };
    }
    case 'badChunk':
      return {
        steps: [
          head([...headers, 'Transfer-Encoding: chunked', close]),
          rng.pick([
            'zz\r\n{}\r\n0\r\n\r\n',
            'ffffffffffffffffff\r\n{}',
            '2\r\n{}0\r\n\r\n',
            '5\r\n{}\r\n',
            '-1\r\n\r\n',
          ]),
          ...(rng.chance(0.5) ? [{ end: true } as const] : []),
        ],
        ...one,
      };
    case 'chunkExtension':
      return {
        steps: [
          head([...headers, 'Transfer-Encoding: chunked', close]),
          chunks(data, rng.pick([';a=b', `;${'e'.repeat(20_000)}`, ';"quoted"'])),
        ],
        ...one,
      };
    case 'oddTransferEncoding':
      return {
        steps: [
          head([
            ...headers,
            `Transfer-Encoding: ${rng.pick(['gzip, chunked', 'chunked, identity', 'Chunked', 'identity', 'chunked\t', 'x'])}`,
            close,
          ]),
          chunks(data),
        ],
        ...one,
      };
    case 'bareLf':
      return { steps: [head([...headers, `Content-Length: ${data.length}`, close], '\n'), data], ...one };
    default:
      return { steps: [head([...headers, `Content-Length: ${data.length}`], CRLF, 'HTTP/1.0'), data], ...one };
  }
}

/** Whole connections that are not a request at all, or stop half way. */
function oddConnection(rng: Rng, notes: string[]): { steps: Step[]; responses: number; timeoutMs: number } {
  const how = rng.weighted({
    randomBytes: 20,
    http2Preface: 8,
    tlsHello: 6,
    badMethodToken: 10,
    lowercaseMethod: 6,
    badVersion: 10,
    headerWithoutColon: 8,
    spaceBeforeColon: 6,
    obsFold: 6,
    nulInHeader: 6,
    hugeHeaders: 6,
    manyHeaders: 4,
    partialHeadersEnd: 8,
    partialHeadersStall: 1,
    silent: 1,
    pipelined: 10,
    emptyLines: 4,
  });
  notes.push(`connection:${how}`);
  const one = (steps: Step[], timeoutMs = DEFAULT_TIMEOUT_MS) => ({ steps, responses: 1, timeoutMs });
  const get = (extra = '') => `GET /z1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}`;
  switch (how) {
    case 'randomBytes':
      return one([rng.bytes(rng.int(1, 2000)), { end: true }]);
    case 'http2Preface':
      return one(['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', rng.bytes(30)]);
    case 'tlsHello':
      return one([Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), rng.bytes(100)]);
    case 'badMethodToken':
      return one([
        `${rng.pick(['G ET', 'GET\u0000', '(GET)', 'GE\u00c9T', 'X'.repeat(100)])} /z1/health HTTP/1.1\r\nHost: x\r\n\r\n`,
      ]);
    case 'lowercaseMethod':
      return one(['get /z1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    case 'badVersion':
      return one([
        `GET /z1/health ${rng.pick(['HTTP/2.0', 'HTTP/1.2', 'HTTP/9', 'HTTP/1', 'FTP/1.1', ''])}\r\nHost: x\r\n\r\n`,
      ]);
    case 'headerWithoutColon':
      return one([get('NoColonHere\r\nConnection: close\r\n\r\n')]);
    case 'spaceBeforeColon':
      return one([get('Content-Length : 5\r\nConnection: close\r\n\r\nhello')]);
    case 'obsFold':
      return one([get('X-Folded: a\r\n b\r\nConnection: close\r\n\r\n')]);
    case 'nulInHeader':
      return one([get('X-Nul: a\u0000b\r\nConnection: close\r\n\r\n')]);
    case 'hugeHeaders':
      return one([get(`X-Huge: ${'h'.repeat(rng.pick([17_000, 70_000]))}\r\n\r\n`)]);
    case 'manyHeaders':
      return one([
        get(`${Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('')}Connection: close\r\n\r\n`),
      ]);
    case 'partialHeadersEnd':
      return one([get('X-Half: yes\r\n').slice(0, rng.int(1, 40)), { end: true }]);
    case 'partialHeadersStall':
      return one([get('X-Half: yes\r\n')]);
    case 'silent':
      return one([]);
    case 'pipelined': {
      const n = rng.int(2, 4);
      const requests = Array.from({ length: n }, (_, i) =>
        i === n - 1 ? `${get('Connection: close\r\n')}\r\n` : rng.chance(0.2) ? 'BROKEN\r\n\r\n' : `${get()}\r\n`,
      );
      return { steps: [requests.join('')], responses: n, timeoutMs: DEFAULT_TIMEOUT_MS };
    }
    default:
      return one([`\r\n\r\n${get('Connection: close\r\n')}\r\n`]);
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'QUERY'];

function makeCase(index: number, seed: number, target: Target): Case {
  const rng = caseRng(seed, index);
  const notes: string[] = [];
  const kind = rng.weighted({ request: 85, connection: 15 });
  if (kind === 'connection') {
    const c = oddConnection(rng, notes);
    return { index, kind, label: notes.join(' '), head: false, ...c };
  }
  const op = rng.pick(target.operations);
  const method = rng.chance(0.85) ? op.method : rng.pick(METHODS);
  notes.push(`${method} ${op.operationId}`);
  const path = requestPath(op, rng, notes);
  const sendsBody = ['POST', 'PUT', 'PATCH'].includes(method) || rng.chance(0.05);
  const headers = [...authHeaders(op, target, rng, notes), ...extraHeaders(rng, notes)];
  let body: Buffer | undefined;
  if (sendsBody) {
    const { bytes, coding } = encode(bodyBytes(op, rng, notes), rng, target, notes);
    body = bytes;
    const type = rng.weighted({ json: 88, jsonCharset: 4, text: 3, none: 3, multipart: 2 });
    if (type !== 'none') {
      headers.push(
        `Content-Type: ${{ json: 'application/json', jsonCharset: 'application/json; charset=utf-16', text: 'text/plain', multipart: 'multipart/form-data; boundary=x' }[type]}`,
      );
    }
    if (type !== 'json') notes.push(`type:${type}`);
    if (coding !== undefined) headers.push(`Content-Encoding: ${coding}`);
  }
  const c = framed(method, path, headers, body, rng, notes);
  return { index, kind, label: notes.join(' '), head: method === 'HEAD', ...c };
}

// ------------------------------------------------------------------------------------------------ judging

interface Finding {
  index: number;
  label: string;
  problem: string;
  detail: string;
}

/** The 503 of a capability this server does not have yet (documented, like schemathesis accepts it). */
function plannedUnavailable(status: number, body: string, path: string, head: boolean): boolean {
  if (status !== 503) return false;
  if (head) return /^\/(z1\/(memory|rag|sla)|metrics)/.test(path);
  try {
    const parsed = JSON.parse(body) as { code?: string; message?: string };
    return (
      parsed.code === 'SERVICE_UNAVAILABLE' && (parsed.message ?? '').endsWith('is not available on this server yet')
    );
  } catch {
    return false;
  }
}

function judge(c: Case, exchange: RawExchange): Finding[] {
  const findings: Finding[] = [];
  const firstLine =
    (c.steps.find((s) => typeof s === 'string' || Buffer.isBuffer(s)) ?? '').toString().split('\r\n')[0] ?? '';
  const path = firstLine.split(' ')[1] ?? '';
  for (const response of exchange.responses) {
    const snippet = `${response.status} ${response.body.slice(0, 200)}`;
    if (response.status >= 500 && !plannedUnavailable(response.status, response.body, path, c.head)) {
      findings.push({ index: c.index, label: c.label, problem: '5xx', detail: snippet });
    }
    if (response.status >= 400 && !c.head && !isErrorBody(response.body)) {
      findings.push({ index: c.index, label: c.label, problem: 'no error body', detail: snippet });
    }
  }
  if (!exchange.closedByServer && exchange.responses.length < c.responses && exchange.ms >= c.timeoutMs - 50) {
    findings.push({
      index: c.index,
      label: c.label,
      problem: 'hung',
      detail: `${exchange.responses.length} of ${c.responses} responses and still open after ${Math.round(exchange.ms)} ms`,
    });
  }
  return findings;
}

// ------------------------------------------------------------------------------------------------ running

async function prepare(): Promise<Target> {
  const url = env('PVAI_URL');
  const apiKey = env('PVAI_API_KEY');
  const adminToken = env('PVAI_ADMIN_TOKEN');
  const res = await fetch(`${url}/admin/accounts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email: `fuzz-victim-${Date.now()}@example.com`, tier: 'startup', credits: 10 }),
  });
  if (res.status !== 201) throw new Error(`creating the fuzz account failed: ${res.status} ${await res.text()}`);
  const victimAccountId = ((await res.json()) as { account: { id: string } }).account.id;
  // 20 MB of zeros, ~20 KB gzipped: under the body limit as sent, 20 times over it once inflated.
  const zipBomb = gzipSync(Buffer.alloc(20 * 1024 * 1024), { level: 9 });
  return { url, apiKey, adminToken, victimAccountId, operations: contractOperations(victimAccountId), zipBomb };
}

async function healthAfter(target: Target): Promise<string[]> {
  const problems: string[] = [];
  const check = async (name: string, path: string, init: RequestInit = {}) => {
    try {
      const res = await fetch(target.url + path, { ...init, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if (res.status !== 200) problems.push(`${name}: ${res.status} ${text.slice(0, 200)}`);
    } catch (err) {
      problems.push(`${name}: ${(err as Error).message}`);
    }
  };
  const auth = { Authorization: `Bearer ${target.apiKey}` };
  await check('liveness', '/z1/health');
  await check('readiness', '/z1/health/ready');
  await check('usage', '/z1/usage', { headers: auth });
  await check('chat completion', '/z1/chat/completions', {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      model: 'PV-TURBO',
      user_id: 'fuzz-after',
      messages: [{ role: 'user', content: 'still there?' }],
    }),
  });
  return problems;
}

function serverLogErrors(path: string | undefined, from: number): string[] {
  if (!path) return [];
  const out: string[] = [];
  for (const line of readFileSync(path, 'utf8').slice(from).split('\n')) {
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50) out.push(`${entry.msg ?? ''}: ${entry.err?.message ?? ''}`.slice(0, 300));
    } catch {
      // not a JSON log line
    }
  }
  return out;
}

function show(c: Case): void {
  console.log(`case ${c.index} (${c.kind}): ${c.label}`);
  for (const step of c.steps) {
    if (typeof step === 'string' || Buffer.isBuffer(step)) {
      const text = step.toString('latin1');
      console.log(JSON.stringify(text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} bytes)` : text));
    } else {
      console.log(JSON.stringify(step));
    }
  }
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  const target = await prepare();
  const logStart = opts.serverLog ? readFileSync(opts.serverLog, 'utf8').length : 0;
  const indexes = opts.only !== undefined ? [opts.only] : Array.from({ length: opts.requests }, (_, i) => i);
  const started = performance.now();
  const findings: Finding[] = [];
  const statuses = new Map<string, number>();
  const codes = new Map<string, number>();
  const kinds = new Map<string, number>();
  let responses = 0;
  let closedWithoutAnswer = 0;
  const unanswered: string[] = [];
  let next = 0;
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  const worker = async () => {
    for (;;) {
      const i = next++;
      const index = indexes[i];
      if (index === undefined) return;
      const c = makeCase(index, opts.seed, target);
      if (opts.show) show(c);
      const exchange = await rawExchange(target.url, c.steps, {
        responses: c.responses,
        timeoutMs: c.timeoutMs,
        head: c.head,
      });
      count(kinds, c.label.split(' ')[0]?.split(':')[0] ?? c.kind);
      responses += exchange.responses.length;
      if (exchange.responses.length === 0) {
        closedWithoutAnswer++;
        if (unanswered.length < 10)
          unanswered.push(`case ${c.index}: ${c.label}${exchange.error ? ` (${exchange.error})` : ''}`);
      }
      for (const response of exchange.responses) {
        count(statuses, String(response.status));
        if (response.status >= 400 && !c.head) {
          try {
            count(codes, String((JSON.parse(response.body) as { code?: string }).code));
          } catch {
            count(codes, '(no JSON)');
          }
        }
      }
      findings.push(...judge(c, exchange));
      if (opts.show) console.log(JSON.stringify(exchange, null, 2));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency) }, worker));
  const seconds = (performance.now() - started) / 1000;
  const health = await healthAfter(target);
  const logErrors = serverLogErrors(opts.serverLog, logStart);

  const sorted = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  console.log(
    `malformed-HTTP fuzz: seed ${opts.seed}, ${indexes.length} cases, concurrency ${opts.concurrency}, ${seconds.toFixed(1)} s`,
  );
  console.log(`  responses: ${responses}; connections closed without an answer: ${closedWithoutAnswer}`);
  for (const line of unanswered) console.log(`    ${line}`);
  console.log(`  statuses: ${sorted(statuses)}`);
  console.log(`  error codes: ${sorted(codes)}`);
  console.log(`  by method ("connection": not a request at all): ${sorted(kinds)}`);
  const byProblem = new Map<string, Finding[]>();
  for (const f of findings) byProblem.set(f.problem, [...(byProblem.get(f.problem) ?? []), f]);
  for (const [problem, list] of byProblem) {
    console.log(`FINDING ${problem}: ${list.length} case(s); replay one with --seed ${opts.seed} --only N --show`);
    for (const f of list.slice(0, 10))
      console.log(`  case ${f.index}: ${f.label}\n    ${f.detail.replace(/\n/g, ' ')}`);
  }
  for (const problem of health) console.log(`FINDING unhealthy after the run: ${problem}`);
  for (const line of logErrors.slice(0, 10)) console.log(`FINDING server logged an error: ${line}`);
  if (logErrors.length > 10) console.log(`  … ${logErrors.length - 10} more error lines in the server log`);
  const failed = findings.length > 0 || health.length > 0 || logErrors.length > 0;
  console.log(failed ? 'FAIL' : 'PASS: no 5xx, every error with the error body, nothing hanging, healthy after');
  process.exitCode = failed ? 1 : 0;
}

await main();
