import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../errors/index.js';
import { detectFormat, looksLikeText } from '../extract/index.js';
import type { UploadPart } from '../http/index.js';

/** The bytes of a file stored per row: large enough that a 512 MiB file is 512 rows, small enough to stream. */
const PART_BYTES = 1024 * 1024;
/** How much of the start the format is found from (text's strict UTF-8 check reads 64 KiB). */
const HEAD_BYTES = 65_537;

/**
 * Writes an uploaded file's bytes as they arrive: the format found from its first bytes and name (the documents'
 * formats, else 415 before anything is stored), then `begin` once, then one `append` per 1 MiB. At most one
 * part and the head are in memory at a time; the upload waits for each write (busboy then reads no faster).
 */
export async function sinkUpload(
  part: UploadPart,
  store: { begin(contentType: string): Promise<void>; append(ordinal: number, data: Buffer): Promise<void> },
): Promise<{ bytes: number; contentType: string; filename: string }> {
  if (part.field !== 'file') {
    part.stream.resume();
    throw new AppError('INVALID_PARAMETER', `Unknown file field ${part.field}`, {
      field: part.field,
      reason: 'unknown field',
    });
  }
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let ordinal = 0;
  let bytes = 0;
  let contentType: string | undefined;
  const start = async (head: Buffer) => {
    const sniffed = looksLikeText(head) ? undefined : (await fileTypeFromBuffer(head))?.mime;
    const format = detectFormat(head, part.filename, part.contentType, sniffed);
    if (!format) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Supported files are txt, md, html, pdf and docx', {
        content_type: part.contentType,
        filename: part.filename,
        ...(sniffed ? { detected: sniffed } : {}),
      });
    }
    contentType = format;
    await store.begin(format);
  };
  const flush = async (all: boolean) => {
    while (pendingBytes >= PART_BYTES || (all && pendingBytes > 0)) {
      const joined = Buffer.concat(pending);
      const piece = joined.subarray(0, PART_BYTES);
      const rest = joined.subarray(piece.length);
      await store.append(ordinal++, Buffer.from(piece));
      pending = rest.length > 0 ? [Buffer.from(rest)] : [];
      pendingBytes = rest.length;
    }
  };
  for await (const chunk of part.stream as AsyncIterable<Buffer>) {
    pending.push(chunk);
    pendingBytes += chunk.length;
    bytes += chunk.length;
    if (contentType === undefined && pendingBytes >= HEAD_BYTES) await start(Buffer.concat(pending));
    if (contentType !== undefined) await flush(false);
  }
  if (bytes === 0) throw new AppError('EMPTY_DOCUMENT', 'The file is empty');
  if (contentType === undefined) await start(Buffer.concat(pending));
  await flush(true);
  return { bytes, contentType: contentType as string, filename: part.filename };
}
