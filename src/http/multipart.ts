import busboy from 'busboy';
import { AppError } from '../errors/index.js';
import { formFieldText, invalidText } from './text.js';
import type { AppContext, Upload } from './types.js';

/** Form fields are short (ids, titles, a metadata JSON); only the file may be large. */
const FIELD_LIMIT_BYTES = 64 * 1024;

/**
 * Reads a multipart/form-data body for operations whose contract accepts one, at most `limit` bytes of
 * file, one file and a few fields; anything over: 413, a malformed body: 400. The upload goes to the
 * handler as `call.upload` (openapi-backend validates JSON bodies only; the handler checks the fields).
 */
export function readMultipart(ctx: AppContext, limit: number): Promise<Upload> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) {
    return Promise.reject(
      new AppError('PAYLOAD_TOO_LARGE', `The body is over the ${limit}-byte limit`, { limit_bytes: limit }),
    );
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: ctx.req.headers,
        limits: { fileSize: limit, files: 1, fields: 16, fieldSize: FIELD_LIMIT_BYTES, parts: 17 },
        // Field values arrive as their bytes (latin1 maps each byte to one character) and are decoded as
        // strict UTF-8 below: busboy's own UTF-8 decoding would replace bytes that are not UTF-8 with U+FFFD.
        defCharset: 'latin1',
      });
    } catch (err) {
      reject(
        new AppError(
          'INVALID_PARAMETER',
          `Malformed multipart body: ${(err as Error).message}`,
          { field: 'body', reason: (err as Error).message },
          {},
          { cause: err },
        ),
      );
      return;
    }
    const upload: Upload = { fields: {} };
    let failed = false;
    const fail = (err: AppError) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(parser);
      ctx.req.resume();
      reject(err);
    };
    const tooLarge = () =>
      fail(new AppError('PAYLOAD_TOO_LARGE', `The file is over the ${limit}-byte limit`, { limit_bytes: limit }));
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) {
        fail(new AppError('INVALID_PARAMETER', `The field ${name} is too long`, { field: name, reason: 'too long' }));
        return;
      }
      const text = formFieldText(name, value);
      if (typeof text !== 'string') {
        fail(invalidText(text));
        return;
      }
      upload.fields[name] = text;
    });
    parser.on('file', (name, stream, info) => {
      const parts: Buffer[] = [];
      stream.on('data', (part: Buffer) => parts.push(part));
      stream.on('limit', tooLarge);
      stream.on('close', () => {
        if (failed) return;
        upload.file = {
          field: name,
          filename: info.filename ?? '',
          contentType: info.mimeType ?? 'application/octet-stream',
          data: Buffer.concat(parts),
        };
      });
    });
    parser.on('filesLimit', () =>
      fail(new AppError('INVALID_PARAMETER', 'One file per upload', { field: 'file', reason: 'one file per upload' })),
    );
    parser.on('partsLimit', () =>
      fail(new AppError('INVALID_PARAMETER', 'Too many form fields', { field: 'body', reason: 'too many parts' })),
    );
    parser.on('error', (err: Error) =>
      fail(
        new AppError(
          'INVALID_PARAMETER',
          `Malformed multipart body: ${err.message}`,
          { field: 'body', reason: err.message },
          {},
          { cause: err },
        ),
      ),
    );
    parser.on('close', () => {
      if (!failed) resolve(upload);
    });
    ctx.req.pipe(parser);
  });
}

/** Whether a request carries a multipart/form-data body. */
/** Whether the contract lets the operation take a multipart body (a document upload). */
export function acceptsMultipart(operation: Record<string, unknown> | undefined): boolean {
  const content = (operation?.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
  return content !== undefined && 'multipart/form-data' in content;
}

export function isMultipart(headers: Record<string, string | string[] | undefined>): boolean {
  const type = headers['content-type'];
  return typeof type === 'string' && /^multipart\/form-data\b/i.test(type);
}
