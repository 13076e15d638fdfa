import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import type { StreamedUpload } from '../http/index.js';
import { releaseReadBuffers } from './release-read-buffers.js';
import type { CommitResult, SqlFileStore } from './sql-file-store.js';
import type { FilePurpose, FileRecord, ListPage, Owner } from './types.js';
import { sinkUpload } from './upload-sink.js';

/** An upload left `uploading` this long (its client gone, or the server stopped) is swept. */
const STALE_UPLOAD_MS = 24 * 60 * 60 * 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface UploadCaps {
  maxFileBytes: number;
  maxStoredBytes: number;
  maxFiles: number;
}

/** What the form said beside the file, once read: checked by the operation, which gives the owner and purpose. */
export type FormCheck = (fields: Record<string, string>) => { purpose: FilePurpose; userId: string | null };

/** What a deleted file's bytes were part of (vector stores) and must leave before the delete answers. */
export type FileDeleteListener = (file: FileRecord) => Promise<void>;

/**
 * Files of OpenAI's Files API, bytes in the service's database: uploads streamed in (`sinkUpload`), downloads
 * streamed out a part at a time, deletes that first remove the file from whatever holds it (`onDelete`).
 */
export class FileService {
  readonly #store: SqlFileStore;
  readonly #clock: Clock;
  readonly #deleteListeners: FileDeleteListener[] = [];
  #sweep: NodeJS.Timeout | undefined;

  constructor(deps: { store: SqlFileStore; clock: Clock }) {
    this.#store = deps.store;
    this.#clock = deps.clock;
  }

  onDelete(listener: FileDeleteListener): void {
    this.#deleteListeners.push(listener);
  }

  start(): Promise<void> {
    this.#sweep = setInterval(() => void this.sweepStaleUploads().catch(() => undefined), SWEEP_EVERY_MS);
    this.#sweep.unref();
    return this.sweepStaleUploads();
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
  }

  async sweepStaleUploads(): Promise<void> {
    for (const id of await this.#store.staleUploads(this.#clock() - STALE_UPLOAD_MS)) await this.#store.remove(id);
  }

  /**
   * Streams the upload into the database under the tier's caps: the number of files is checked before a byte is
   * read, the per-file and account byte caps while the bytes come (the smaller one bounds the stream), and the
   * account's totals again when the file is made visible (two uploads at once cannot both take the last room).
   */
  async upload(accountId: string, upload: StreamedUpload, caps: UploadCaps, check: FormCheck): Promise<FileRecord> {
    const totals = await this.#store.totals(accountId);
    if (totals.files >= caps.maxFiles) throw quotaExceeded(caps.maxFiles);
    const room = Math.max(0, caps.maxStoredBytes - totals.bytes);
    const byAccount = room < caps.maxFileBytes;
    const limit = {
      bytes: Math.min(caps.maxFileBytes, room),
      tooLarge: () => (byAccount ? storageFull(caps.maxStoredBytes) : fileTooLarge(caps.maxFileBytes)),
    };
    const draft: FileRecord = {
      id: `file-${randomBytes(12).toString('hex')}`,
      accountId,
      userId: null,
      filename: '',
      purpose: 'assistants',
      contentType: 'application/octet-stream',
      bytes: 0,
      createdAt: this.#clock(),
    };
    let begun = false;
    try {
      const { fields, file } = await upload.read(
        (part) =>
          sinkUpload(part, {
            begin: async (contentType) => {
              begun = true;
              await this.#store.begin({ ...draft, filename: part.filename, contentType });
            },
            append: (ordinal, data) => this.#store.appendPart(draft.id, ordinal, data),
          }),
        limit,
      );
      if (!file) throw new AppError('INVALID_PARAMETER', 'file is required', { field: 'file', reason: 'is required' });
      const { purpose, userId } = check(fields);
      const stored: FileRecord = { ...draft, ...file, purpose, userId };
      const committed: CommitResult = await this.#store.commit(stored, caps);
      if (!committed.ok) {
        throw committed.limit === 'files' ? quotaExceeded(caps.maxFiles) : storageFull(caps.maxStoredBytes);
      }
      return committed.file;
    } catch (err) {
      if (begun) await this.#store.remove(draft.id);
      throw err;
    }
  }

  async get(viewer: Owner, id: string): Promise<FileRecord> {
    const file = await this.#store.get(viewer, id);
    if (!file) throw new AppError('NOT_FOUND', `No file ${id}`, { file_id: id });
    return file;
  }

  list(viewer: Owner, page: ListPage & { purpose?: FilePurpose | undefined }): Promise<FileRecord[]> {
    return this.#store.list(viewer, page);
  }

  /** The file's bytes, a part at a time as the reader takes them. */
  download(file: FileRecord): Readable {
    const store = this.#store;
    return Readable.from(
      (async function* () {
        for (let ordinal = 0; ; ordinal++) {
          const part = await store.part(file.id, ordinal);
          if (part === undefined) return;
          // The parts read and sent are garbage outside the heap, as an upload's socket reads are.
          if (ordinal > 0 && ordinal % 8 === 0) releaseReadBuffers();
          yield part;
        }
      })(),
    );
  }

  /** The whole file in memory: for extracting its text (the extractor reads a file whole, as documents' does). */
  async bytes(file: FileRecord): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.download(file)) parts.push(part as Buffer);
    return Buffer.concat(parts);
  }

  /** Removes the file from every vector store, then deletes it and its bytes. */
  async delete(file: FileRecord): Promise<void> {
    for (const listener of this.#deleteListeners) await listener(file);
    await this.#store.remove(file.id);
  }

  ownedBy(accountId: string, userId: string): Promise<FileRecord[]> {
    return this.#store.ownedBy(accountId, userId);
  }
}

function quotaExceeded(max: number): AppError {
  return new AppError('QUOTA_EXCEEDED', `The tier holds at most ${max} files; delete some first`, { max_files: max });
}

function storageFull(max: number): AppError {
  return new AppError('STORAGE_LIMIT_EXCEEDED', `The account's files would exceed the tier's ${max} bytes`, {
    limit_bytes: max,
  });
}

function fileTooLarge(max: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `The file is over the tier's ${max}-byte limit`, { limit_bytes: max });
}
