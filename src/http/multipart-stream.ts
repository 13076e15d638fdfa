import busboy from 'busboy';
import { AppError } from '../errors/index.js';
import { formFieldText, invalidText } from './text.js';
import { answeredBeforeItsBody } from './timeouts.js';
import type { AppContext, StreamedUpload, UploadPart } from './types.js';

/** Form fields are short (a purpose, an id); only the file may be large. */
const FIELD_LIMIT_BYTES = 64 * 1024;
/** What a multipart body may carry beside its file: the framing and a few short fields. */
const FRAMING_ALLOWANCE_BYTES = 256 * 1024;

function malformed(err: unknown): AppError {
  const message = (err as Error).message;
  return new AppError(
    'INVALID_PARAMETER',
    `Malformed multipart body: ${message}`,
    { field: 'body', reason: message },
    {},
    { cause: err },
  );
}

/**
 * A multipart/form-data body its handler reads after authentication and admission (the contract's
 * `x-upload: stream`): fields as they come, the one file handed to the handler's sink as a stream that it
 * consumes at its own pace (busboy waits for it: the socket is read no faster than the sink writes), over the
 * limit failing with the handler's own error. A body its handler never reads is drained once the answer is
 * out, as any body answered before it was read.
 */
export function streamedMultipart(ctx: AppContext): StreamedUpload {
  let read = false;
  ctx.res.once('finish', () => {
    if (!read) answeredBeforeItsBody(ctx.req);
  });
  return {
    read(sink, limit) {
      read = true;
      const declared = Number(ctx.get('content-length') || 0);
      if (declared > limit.bytes + FRAMING_ALLOWANCE_BYTES) {
        answeredBeforeItsBody(ctx.req);
        return Promise.reject(limit.tooLarge());
      }
      return readForm(ctx, sink, limit);
    },
  };
}

function readForm<T>(
  ctx: AppContext,
  sink: (part: UploadPart) => Promise<T>,
  limit: { bytes: number; tooLarge: () => Error },
): Promise<{ fields: Record<string, string>; file: T | undefined }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // busboy's `limit` fires when a file *reaches* fileSize: one byte more, so that a file of exactly the limit passes.
      parser = busboy({
        headers: ctx.req.headers,
        limits: { fileSize: limit.bytes + 1, files: 1, fields: 16, fieldSize: FIELD_LIMIT_BYTES, parts: 17 },
        defCharset: 'latin1',
      });
    } catch (err) {
      reject(malformed(err));
      return;
    }
    const fields: Record<string, string> = {};
    let sunk: Promise<T> | undefined;
    let file: (NodeJS.ReadableStream & { destroy(err?: Error): void }) | undefined;
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      // The sink stops reading with the same error (its part of the body will never come).
      file?.destroy(err);
      ctx.req.unpipe(parser);
      answeredBeforeItsBody(ctx.req);
      // Once the sink has stopped: what it wrote is then all there is for the handler to clean up.
      const settle = () => reject(err);
      if (sunk) sunk.then(settle, settle);
      else settle();
    };
    parser.on('field', (name, value, info) => {
      if (!name) {
        fail(new AppError('INVALID_PARAMETER', 'A form field has no name', { field: 'body', reason: 'unnamed field' }));
        return;
      }
      if (info.valueTruncated) {
        fail(new AppError('INVALID_PARAMETER', `The field ${name} is too long`, { field: name, reason: 'too long' }));
        return;
      }
      const text = formFieldText(name, value);
      if (typeof text !== 'string') fail(invalidText(text));
      else fields[name] = text;
    });
    parser.on('file', (field, stream, info) => {
      file = stream;
      stream.on('limit', () => stream.destroy(limit.tooLarge()));
      sunk = sink({
        field,
        filename: info.filename ?? '',
        contentType: info.mimeType ?? 'application/octet-stream',
        stream,
      });
      // The sink's failure (its own refusal, or the limit) ends the form at once.
      sunk.catch((err: Error) => {
        stream.resume();
        fail(err);
      });
    });
    parser.on('filesLimit', () =>
      fail(new AppError('INVALID_PARAMETER', 'One file per upload', { field: 'file', reason: 'one file per upload' })),
    );
    parser.on('partsLimit', () =>
      fail(new AppError('INVALID_PARAMETER', 'Too many form fields', { field: 'body', reason: 'too many parts' })),
    );
    parser.on('error', (err: Error) => fail(malformed(err)));
    parser.on('close', () => {
      if (failed) return;
      if (!sunk) {
        resolve({ fields, file: undefined });
        return;
      }
      sunk.then(
        (file) => {
          if (!failed) resolve({ fields, file });
        },
        () => undefined,
      );
    });
    ctx.req.pipe(parser);
  });
}
