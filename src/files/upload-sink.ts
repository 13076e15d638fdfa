import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../errors/index.js';
import { detectFormat, looksLikeText } from '../extract/index.js';
import type { UploadPart } from '../http/index.js';
import { releaseReadBuffers } from './release-read-buffers.js';

/** The bytes of a file stored per row: large enough that a 512 MiB file is 512 rows, small enough to stream. */
const PART_BYTES = 1024 * 1024;
/** How much of the start the format is found from (text's strict UTF-8 check reads 64 KiB). */
const HEAD_BYTES = 65_537;
/** How many parts stored between two scavenges that free the socket reads already consumed (`releaseReadBuffers`). */
const RELEASE_EVERY_PARTS = 8;

/**
 * Writes an uploaded file's bytes as they arrive: the format found from its first bytes and name (the documents'
 * formats, else 415 before anything is stored), then `begin` once, then one `append` per 1 MiB, from one
 * buffer reused for every part; the upload waits for each write (busboy then reads no faster).
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
  // One part's buffer, filled in place and written when full: the upload makes no garbage of its own (a copy per
  // part would leave ~3 MiB behind for every MiB until a collection comes).
  const buffer = Buffer.allocUnsafe(PART_BYTES);
  let filled = 0;
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
  for await (const chunk of part.stream as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    for (let at = 0; at < chunk.length; ) {
      const taken = chunk.copy(buffer, filled, at);
      filled += taken;
      at += taken;
      if (contentType === undefined && filled >= HEAD_BYTES) await start(buffer.subarray(0, filled));
      if (filled === PART_BYTES) {
        // The store copies the bytes before it resolves (into SQLite, or into PostgreSQL's message): the buffer
        // is free again.
        await store.append(ordinal++, buffer);
        filled = 0;
        if (ordinal % RELEASE_EVERY_PARTS === 0) releaseReadBuffers();
      }
    }
  }
  if (bytes === 0) throw new AppError('EMPTY_DOCUMENT', 'The file is empty');
  if (contentType === undefined) await start(buffer.subarray(0, filled));
  if (filled > 0) await store.append(ordinal, buffer.subarray(0, filled));
  return { bytes, contentType: contentType as string, filename: part.filename };
}
