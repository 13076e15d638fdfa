import { connect } from 'node:net';

/**
 * HTTP/1.1 over a bare TCP socket, for the tests (and the fuzz stage) that must send what no HTTP
 * client would: broken framing, lying lengths, repeated headers, bytes spread over seconds.
 */

/** One response as read off the socket. */
export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

/** What happened on one connection. */
export interface RawExchange {
  responses: RawResponse[];
  /** Bytes after the last complete response (a response cut short, or garbage). */
  trailing: string;
  /** The server closed the connection (rather than the exchange timing out). */
  closedByServer: boolean;
  /** A socket error (ECONNRESET…), if any. */
  error?: string;
  /** From the connection to the end of the exchange. */
  ms: number;
}

/** A write, a pause (`{ wait: ms }`) or the end of the client's side (`{ end: true }`, a half-close). */
export type Step = string | Buffer | { wait: number } | { end: true };

export interface ExchangeOptions {
  /** Give up (and close) after this long. Default 10 s. */
  timeoutMs?: number;
  /** Stop (and close) once this many complete responses have arrived. Default: wait for the server to close. */
  responses?: number;
  /** The requests are HEAD: their responses have no body whatever Content-Length says. */
  head?: boolean;
}

export function rawExchange(url: string, steps: readonly Step[], options: ExchangeOptions = {}): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let finished = false;
    let closedByServer = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const parsed = parseResponses(Buffer.concat(chunks), options.head ?? false);
      resolve({
        ...parsed,
        closedByServer,
        ...(error ? { error } : {}),
        ms: performance.now() - started,
      });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (options.responses !== undefined) {
        const parsed = parseResponses(Buffer.concat(chunks), options.head ?? false);
        if (parsed.responses.length >= options.responses && parsed.complete) finish();
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('end', () => {
      closedByServer = true;
    });
    socket.on('close', () => {
      closedByServer ||= error === 'ECONNRESET';
      finish();
    });
    socket.once('connect', async () => {
      for (const step of steps) {
        if (finished || socket.destroyed) return;
        if (typeof step === 'string' || Buffer.isBuffer(step)) {
          socket.write(step);
        } else if ('wait' in step) {
          await new Promise((r) => setTimeout(r, step.wait));
        } else {
          socket.end();
        }
      }
    });
  });
}

/** Every complete response in `data`; `complete` is false when the last one is cut short. */
export function parseResponses(
  data: Buffer,
  head: boolean,
): { responses: RawResponse[]; trailing: string; complete: boolean } {
  const responses: RawResponse[] = [];
  let offset = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', offset);
    if (headEnd === -1) break;
    const lines = data.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!match) break;
    const status = Number(match[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    let cursor = headEnd + 4;
    let body: Buffer;
    if (head || status === 204 || status === 304 || (status >= 100 && status < 200)) {
      body = Buffer.alloc(0);
    } else if ((headers['transfer-encoding'] ?? '').toLowerCase().includes('chunked')) {
      const parts: Buffer[] = [];
      let done = false;
      for (;;) {
        const lineEnd = data.indexOf('\r\n', cursor);
        if (lineEnd === -1) break;
        const size = Number.parseInt(data.subarray(cursor, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size)) break;
        if (size === 0) {
          const end = data.indexOf('\r\n\r\n', lineEnd);
          if (end === -1) break;
          cursor = end + 4;
          done = true;
          break;
        }
        if (lineEnd + 2 + size + 2 > data.length) break;
        parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
        cursor = lineEnd + 2 + size + 2;
      }
      if (!done) return { responses, trailing: data.subarray(offset).toString('latin1'), complete: false };
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (cursor + length > data.length) {
        return { responses, trailing: data.subarray(offset).toString('latin1'), complete: false };
      }
      body = data.subarray(cursor, cursor + length);
      cursor += length;
    } else {
      body = data.subarray(cursor);
      cursor = data.length;
    }
    responses.push({ status, headers, body: body.toString('utf8') });
    offset = cursor;
  }
  const trailing = data.subarray(offset).toString('latin1');
  return { responses, trailing, complete: trailing === '' };
}

/** The request head of a raw request: the request line, `Host`, the given header lines, a blank line. */
export function requestHead(method: string, path: string, headers: ReadonlyArray<string> = []): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
}

/**
 * Whether `body` is the error body of the interface, `{status: "error", message, code, details}`, with OpenAI's
 * `error: {message, type, code, param}` beside it saying the same (message, code in lower case, param the field).
 */
export function isErrorBody(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const details = parsed.details as Record<string, unknown> | null;
    const openai = parsed.error as Record<string, unknown> | undefined;
    return (
      parsed.status === 'error' &&
      typeof parsed.message === 'string' &&
      typeof parsed.code === 'string' &&
      (details === null || (typeof details === 'object' && !Array.isArray(details))) &&
      typeof openai === 'object' &&
      openai !== null &&
      openai.message === parsed.message &&
      openai.code === parsed.code.toLowerCase() &&
      typeof openai.type === 'string' &&
      openai.param === (typeof details?.field === 'string' ? details.field : null) &&
      Object.keys(openai).length === 4 &&
      Object.keys(parsed).length === 5
    );
  } catch {
    return false;
  }
}
