/** How a request is put on the wire (lengths, chunking, line ends), and connections that are no request at all. */
import type { Step } from '../../../test/support/raw-http.js';
import type { Rng } from './random.js';

const CRLF = '\r\n';
const DEFAULT_TIMEOUT_MS = 20_000;

/** A request line, headers and body assembled with the framing the case calls for. */
export function framed(
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
export function oddConnection(rng: Rng, notes: string[]): { steps: Step[]; responses: number; timeoutMs: number } {
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
