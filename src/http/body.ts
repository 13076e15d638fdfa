import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { parse as parseJsonText } from '@hapi/bourne';
import type Koa from 'koa';
import { AppError } from '../errors/index.js';
import { ClientDisconnectedError } from './call.js';
import { findTooDeep } from './json-depth.js';
import { invalidText, jsonTextProblem } from './text.js';
import { answeredBeforeItsBody } from './timeouts.js';
import type { AppContext } from './types.js';

/** The bounds a request body is read within; every one is checked while the body arrives. */
export interface BodyLimits {
  /** The largest body, in bytes: as sent, and again once decompressed (a zip bomb stops here). */
  limitBytes: number;
  /** The deepest nesting of JSON arrays and objects, checked on the text before it is parsed. */
  maxDepth: number;
  /** How long the body may stop arriving (no byte) before the request is answered 408. */
  idleTimeoutMs: number;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** The content codings a body may come in (RFC 9110 §8.4.1); `x-gzip` is gzip's old name. */
const DECOMPRESSORS = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
} as const;
type Coding = keyof typeof DECOMPRESSORS | 'identity';
/** RFC 8259: a JSON text exchanged between systems is UTF-8; other bytes are refused, not replaced. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
/** What co-body's strict mode accepted: a body is an object or an array, after JSON's whitespace. */
const OBJECT_OR_ARRAY = /^[ \t\n\r]*[[{]/;

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Reads and parses JSON bodies of POST, PUT and PATCH: 415 for another media type or an unknown
 * Content-Encoding; 400 `INVALID_ENCODING` for compressed data that does not decode; 413 past the
 * size limit (sent or decompressed); 408 when the body stops arriving; 400 `NESTING_TOO_DEEP` past
 * the depth limit; 400 `INVALID_JSON` for text that is not a JSON object or array (or holds a
 * `__proto__` key). When the answer comes before the whole body has arrived, the connection closes
 * after it if the client stopped sending (408); otherwise the rest of the body is read and dropped.
 */
export function jsonBody(limits: BodyLimits): Koa.Middleware {
  return async (ctx: AppContext, next) => {
    if (!BODY_METHODS.has(ctx.method) || !hasBody(ctx.req)) return next();
    if (!ctx.is('application/json')) {
      answeredBeforeItsBody(ctx.req);
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', {
        content_type: ctx.get('content-type') || null,
      });
    }
    let text: string;
    try {
      text = await readText(ctx.req, contentCoding(ctx.get('content-encoding')), limits);
    } catch (err) {
      if (!ctx.req.complete) {
        // A client that stopped sending gets its 408 and the connection closes; one still sending (a body
        // over the limit, data that does not decompress) has the rest read and dropped, so that it can read
        // the answer instead of meeting a reset, within the request deadline.
        if (err instanceof AppError && err.code === 'REQUEST_TIMEOUT') ctx.set('Connection', 'close');
        else answeredBeforeItsBody(ctx.req);
      }
      throw err;
    }
    ctx.state.body = { text, json: text === '' ? undefined : parseJson(text, limits.maxDepth) };
    await next();
  };
}

/** The one coding of a Content-Encoding header; 415 for one this server does not decode, or several. */
export function contentCoding(header: string): Coding {
  const coding = header.trim().toLowerCase();
  if (coding === '' || coding === 'identity') return 'identity';
  if (Object.hasOwn(DECOMPRESSORS, coding)) return coding as Coding;
  throw new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    `Content-Encoding ${JSON.stringify(header.slice(0, 64))} is not supported; use gzip, deflate, br or none`,
    { content_encoding: header.slice(0, 64), supported: ['gzip', 'deflate', 'br', 'identity'] },
  );
}

/**
 * A JSON object or array within the depth limit whose every string the service takes (http/text.ts), or the
 * 400 that says what is wrong with it.
 */
export function parseJson(text: string, maxDepth: number): unknown {
  if (!OBJECT_OR_ARRAY.test(text)) {
    throw new AppError('INVALID_JSON', 'The body is not valid JSON', {
      field: 'body',
      reason: 'the body must be a JSON object or array',
    });
  }
  const tooDeep = findTooDeep(text, maxDepth);
  if (tooDeep) {
    throw new AppError('NESTING_TOO_DEEP', `${tooDeep.path} nests deeper than ${maxDepth} levels`, {
      field: tooDeep.path,
      reason: `arrays and objects nest at most ${maxDepth} levels deep`,
      max_depth: maxDepth,
    });
  }
  let json: unknown;
  try {
    json = parseJsonText(text, { protoAction: 'error' });
  } catch (err) {
    throw new AppError(
      'INVALID_JSON',
      'The body is not valid JSON',
      { field: 'body', reason: (err as Error).message },
      {},
      { cause: err },
    );
  }
  // Only an escape can put U+0000 or a lone surrogate into parsed JSON: decoded UTF-8 holds neither, and
  // JSON refuses raw control characters. Text without such an escape skips the walk over every string,
  // which allocates a path per value (a chat body: ~1 KB and ~2 µs per request).
  if (!SUSPECT_ESCAPE.test(text)) return json;
  const problem = jsonTextProblem(json);
  if (problem) throw invalidText(problem);
  return json;
}

/** `\u0000` or a `\uD800`–`\uDFFF` escape (case-insensitive), or something that looks like one (a walk then decides). */
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89abcdefABCDEF])/;

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `The body is over the ${limit}-byte limit`, { limit_bytes: limit });
}

/**
 * The body as text, decompressed when `coding` says so. Settles once: with the text, or with the first
 * of: 413 (sent or decompressed bytes past the limit, or a Content-Length announcing that), 400
 * `INVALID_ENCODING`, 400 `INVALID_JSON` (not UTF-8), 408 (no byte for `idleTimeoutMs`), or a
 * ClientDisconnectedError when the client goes away first.
 */
function readText(req: IncomingMessage, coding: Coding, limits: BodyLimits): Promise<string> {
  const { limitBytes, idleTimeoutMs } = limits;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes && coding === 'identity') {
    return Promise.reject(tooLarge(limitBytes));
  }
  return new Promise<string>((resolve, reject) => {
    const decompressor = coding === 'identity' ? undefined : DECOMPRESSORS[coding]();
    const chunks: Buffer[] = [];
    let sent = 0;
    let size = 0;
    let settled = false;

    const finish = (err: Error | undefined, text?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(idle);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      if (decompressor) {
        decompressor.off('data', collect);
        decompressor.off('end', done);
        decompressor.destroy();
      }
      if (err) reject(err);
      else resolve(text ?? '');
    };
    const idle = setTimeout(() => {
      finish(
        new AppError('REQUEST_TIMEOUT', `The body stopped arriving for ${idleTimeoutMs} ms`, {
          timeout_ms: idleTimeoutMs,
          received_bytes: sent,
        }),
      );
    }, idleTimeoutMs);
    const collect = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) return finish(tooLarge(limitBytes));
      chunks.push(chunk);
    };
    const done = () => {
      try {
        finish(undefined, UTF8.decode(Buffer.concat(chunks, size)));
      } catch (err) {
        finish(
          new AppError(
            'INVALID_JSON',
            'The body is not valid JSON',
            { field: 'body', reason: 'the body is not valid UTF-8' },
            {},
            { cause: err },
          ),
        );
      }
    };
    const onData = (chunk: Buffer) => {
      sent += chunk.length;
      if (sent > limitBytes) return finish(tooLarge(limitBytes));
      idle.refresh();
      if (decompressor) decompressor.write(chunk);
      else collect(chunk);
    };
    const onEnd = () => {
      if (decompressor) decompressor.end();
      else done();
    };
    const onClose = () => {
      if (!req.complete) finish(new ClientDisconnectedError());
    };
    if (decompressor) {
      decompressor.on('data', collect);
      decompressor.once('end', done);
      // `on`, not `once`: a write after an error emits another, which must not go unhandled.
      decompressor.on('error', (err: Error) =>
        finish(
          new AppError(
            'INVALID_ENCODING',
            `The body is not valid ${coding} data`,
            { field: 'body', content_encoding: coding, reason: err.message },
            {},
            { cause: err },
          ),
        ),
      );
    }
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onClose);
    req.once('error', onClose);
  });
}

/** The body of a request, for openapi-backend: undefined when there was none (or it was empty). */
export function bodyOf(ctx: AppContext): unknown {
  return ctx.state.body?.json;
}
