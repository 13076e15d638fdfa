/**
 * The generator: case N of a seed, made from the seed and N alone (`caseRng`), so that `--only N --show`
 * replays it. A case is a request (an operation of the contract, its method, path, credentials, headers,
 * body, encoding and framing, each perhaps broken) or a connection that is not one.
 */
import type { Step } from '../../../test/support/raw-http.js';
import { bodyBytes, encode } from './bodies.js';
import { framed, oddConnection } from './framing.js';
import { caseRng, type Rng } from './random.js';
import type { Operation, Target } from './target.js';

export interface Case {
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

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'QUERY'];

export function makeCase(index: number, seed: number, target: Target): Case {
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

/** A case as sent, for `--show`. */
export function show(c: Case): void {
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
