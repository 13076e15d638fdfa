import { createHash, type Hash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import type Koa from 'koa';
import type { Context as OpenApiContext } from 'openapi-backend';
import { AppError } from '../errors/index.js';
import type { HttpPorts, IdempotentClaim, StoredAnswer } from './ports.js';
import type { AppContext, StreamedUpload, UploadPart } from './types.js';

/**
 * Idempotency-Key (the product's decisions are HttpPorts.idempotency's; this file is the HTTP side of them).
 * `idempotencyScope` (Koa, around the contract) runs a keyed POST in the port's scope and ends a replay;
 * `idempotencyClaim` (contract, after authentication and before the rate limiter) claims the key, answers a
 * replay (not admitted, charged or recorded: the usage row needs the principal the rate-limit stage sets), and
 * captures the answer as it is written to the socket (a stream's bytes as they were sent) for the port.
 */

/** 1-255 printable ASCII characters, no space at either end (the contract's pattern). */
const KEY = /^[!-~]([ -~]{0,253}[!-~])?$/;

/** The headers of an answer a replay gives again (with `Idempotent-Replayed: true`). */
const KEPT_HEADERS = [
  'content-type',
  'cache-control',
  'location',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-credits-charged',
  'x-cache',
] as const;

/** Thrown by the claim once a replay is written: ends the contract's handling, caught by idempotencyScope. */
class IdempotentReplay {}

function keyOf(ctx: AppContext): string | undefined {
  const value = ctx.req.headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
}

/** Koa, around the contract: a keyed POST runs in the port's scope (its charges are noted on its claim). */
export function idempotencyScope(ports: Pick<HttpPorts, 'idempotency'>): Koa.Middleware<AppContext['state']> {
  const port = ports.idempotency;
  if (!port) return (_, next) => next();
  const guarded = async (next: Koa.Next) => {
    try {
      await next();
    } catch (err) {
      if (!(err instanceof IdempotentReplay)) throw err;
    }
  };
  return (ctx, next) =>
    ctx.method !== 'POST' || keyOf(ctx as AppContext) === undefined ? next() : port.scope(() => guarded(next));
}

/**
 * What makes two requests the same request: method, path, query, content type and body. A buffered multipart
 * body by its fields and file; a streamed upload (read by its handler, after this) here without its body, which
 * `uploadFingerprint` adds once it was read (as it streamed to the handler, or drained by a retry).
 */
function fingerprintOf(ctx: AppContext): string {
  const hash = createHash('sha256');
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  hash.update(`${ctx.method}\n${ctx.path}\n${ctx.querystring}\n${type}\n`);
  const { body, upload, streamedUpload } = ctx.state;
  if (upload) {
    const fields = Object.entries(upload.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    hash.update(JSON.stringify(fields));
    if (upload.file) {
      hash.update(`\n${upload.file.field}\n${upload.file.filename}\n${upload.file.contentType}\n`);
      hash.update(upload.file.data);
    }
  } else if (streamedUpload) hash.update('streamed');
  else if (body) hash.update(body.json === undefined ? body.text : canonicalJson(body.json));
  return hash.digest('hex');
}

/**
 * A JSON value written with its objects' keys sorted: the same request re-serialised by a client (another key
 * order, other spacing) is the same request. Keys are unique here: the body reader refuses duplicates.
 */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const entries = keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** After authentication, before the rate limiter: a keyed POST's claim, or its replay. */
export function idempotencyClaim(ports: Pick<HttpPorts, 'idempotency'>) {
  return async (c: OpenApiContext, ctx: AppContext): Promise<void> => {
    const port = ports.idempotency;
    const key = keyOf(ctx);
    if (!port || key === undefined || ctx.method !== 'POST' || !c.security?.authorized) return;
    if (!KEY.test(key)) {
      throw new AppError(
        'IDEMPOTENCY_KEY_INVALID',
        'The Idempotency-Key header must be 1-255 printable ASCII characters, without a space at either end',
        { header: 'Idempotency-Key' },
      );
    }
    const principal = (c.security.BearerAuth || c.security.ApiKeyHeader) as unknown;
    const scope =
      principal && typeof principal === 'object' && 'account' in principal
        ? (principal as { account: { id: string } }).account.id
        : 'admin';
    const endpoint = ctx.state.operationId ?? ctx.path;
    const fingerprint = fingerprintOf(ctx);
    const upload = ctx.state.streamedUpload;
    let settled: Promise<string> | undefined;
    const settle = upload && (() => (settled ??= drained(upload, fingerprint)));
    const start = await port.begin({ scope, key, fingerprint, endpoint, ...(settle && { settle }) });
    if ('replay' in start) {
      replay(ctx, start.replay);
      throw new IdempotentReplay();
    }
    const digest: { of?: string } = {};
    if (upload) ctx.state.streamedUpload = hashedAsRead(upload, fingerprint, digest);
    capture(ctx, start.claim, port.maxResponseBytes, upload ? digest : undefined);
  };
}

/** A streamed upload's whole fingerprint: the request's, its fields, its file's name and type, and its bytes. */
function uploadFingerprint(
  base: string,
  fields: Record<string, string>,
  file: Omit<UploadPart, 'stream'> | undefined,
  bytes: Hash,
) {
  const sorted = Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const meta = file ? [file.field, file.filename, file.contentType] : null;
  return createHash('sha256')
    .update(`${base}\n${JSON.stringify(sorted)}\n${JSON.stringify(meta)}\n${bytes.digest('hex')}`)
    .digest('hex');
}

/**
 * The file's bytes hashed as they pass to `part`'s reader (its errors, the limit's too, passed on); `ended` once
 * the reader took the last of them (a reader that stopped early, say after sniffing a format it refuses, never
 * hashed the rest: its attempt has no fingerprint).
 */
function hashing(part: UploadPart, bytes: Hash, ended: () => void): UploadPart {
  const tapped = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      ended();
      done();
    },
  });
  part.stream.on('error', (err) => tapped.destroy(err));
  part.stream.pipe(tapped);
  return { ...part, stream: tapped };
}

/** The handler's upload, its fingerprint put in `digest` once read whole. */
function hashedAsRead(upload: StreamedUpload, base: string, digest: { of?: string }): StreamedUpload {
  return {
    async read(sink, limit) {
      const bytes = createHash('sha256');
      let meta: Omit<UploadPart, 'stream'> | undefined;
      let whole = true;
      const read = await upload.read((part) => {
        meta = { field: part.field, filename: part.filename, contentType: part.contentType };
        whole = false;
        return sink(
          hashing(part, bytes, () => {
            whole = true;
          }),
        );
      }, limit);
      if (whole) digest.of = uploadFingerprint(base, read.fields, meta, bytes);
      return read;
    },
  };
}

/** A retry's upload read to its end and hashed, to compare with the first attempt's (nothing else reads it). */
async function drained(upload: StreamedUpload, base: string): Promise<string> {
  const bytes = createHash('sha256');
  let meta: Omit<UploadPart, 'stream'> | undefined;
  const tooLarge = () => new Error('unreachable: a retry is hashed whatever its length');
  const read = await upload.read(
    async (part) => {
      meta = { field: part.field, filename: part.filename, contentType: part.contentType };
      for await (const chunk of part.stream) bytes.update(chunk as Buffer);
    },
    { bytes: Number.MAX_SAFE_INTEGER, tooLarge },
  );
  return uploadFingerprint(base, read.fields, meta, bytes);
}

/** The stored answer, written as it was first given. */
function replay(ctx: AppContext, answer: StoredAnswer): void {
  ctx.status = answer.status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.body = answer.body;
}

type Write = ServerResponse['write'];
type End = ServerResponse['end'];

/**
 * Keeps a copy of what is written to the socket (up to `maxBytes`), and at the response's close hands the answer
 * to the claim: kept when its handler ran and it was written whole (2xx-4xx, no stream failure); released (the key
 * free again, the attempt's charges refunded) when the handler never ran (401, validation, 429), on a 5xx, or when
 * the answer was not written whole (the client left mid-stream), or a streamed upload was not read whole.
 */
function capture(ctx: AppContext, claim: IdempotentClaim, maxBytes: number, digest?: { of?: string }): void {
  const res = ctx.res;
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  let ended = false;
  const keep = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || over) return;
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array);
    size += bytes.length;
    if (size > maxBytes) {
      over = true;
      chunks.length = 0;
    } else chunks.push(bytes);
  };
  const write = res.write;
  const end = res.end;
  res.write = function (this: ServerResponse, ...args: unknown[]) {
    keep(args[0], args[1]);
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as Write;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    keep(args[0], args[1]);
    ended = true;
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as End;
  // One more listener than a streamed answer's own (stream-deadline, the stream's end): not a leak.
  res.setMaxListeners(res.getMaxListeners() + 1);
  res.once('close', () => {
    const { state } = ctx;
    const whole = ended && state.usage.failedStatus === undefined && state.streamStalled === undefined;
    // A streamed upload its handler refused before reading it whole has no fingerprint a retry could match: the
    // refusal is not kept (it did nothing; the retry is refused again, or runs).
    const unread = digest !== undefined && digest.of === undefined;
    if (state.executing !== true || res.statusCode >= 500 || !whole || unread) {
      claim.release();
      return;
    }
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = res.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const userId = state.usage.userId ?? null;
    const body = over ? null : Buffer.concat(chunks);
    claim.finish({ status: res.statusCode, headers, body, userId, fingerprint: digest?.of });
  });
}
