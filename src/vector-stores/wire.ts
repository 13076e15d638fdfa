import { AppError } from '../errors/index.js';
import type { Schema } from '../http/index.js';
import type { BatchRecord, FileCounts, StoreFileRecord, VectorStoreRecord } from './types.js';
import { AUTO_CHUNKING, CHARS_PER_TOKEN, isExpired } from './vector-store-service.js';

const DAY_MS = 86_400_000;
const seconds = (ms: number) => Math.floor(ms / 1000);
const MAX_ATTRIBUTE_KEY = 64;

export function storeBody(
  store: VectorStoreRecord,
  usage: { counts: FileCounts; bytes: number },
  now: number,
): Schema<'VectorStore'> {
  const days = store.expiresAfterDays;
  return {
    id: store.id,
    object: 'vector_store',
    created_at: seconds(store.createdAt),
    name: store.name,
    description: store.description,
    usage_bytes: usage.bytes,
    file_counts: usage.counts,
    status: isExpired(store, now) ? 'expired' : usage.counts.in_progress > 0 ? 'in_progress' : 'completed',
    expires_after: days === null ? null : { anchor: 'last_active_at', days },
    expires_at: days === null ? null : seconds(store.lastActiveAt + days * DAY_MS),
    last_active_at: seconds(store.lastActiveAt),
    metadata: store.metadata,
    user_id: store.userId,
  };
}

export function linkBody(link: StoreFileRecord): Schema<'VectorStoreFile'> {
  return {
    id: link.fileId,
    object: 'vector_store.file',
    usage_bytes: link.bytes,
    created_at: seconds(link.createdAt),
    vector_store_id: link.vectorStoreId,
    status: link.status,
    last_error: link.lastError,
    // A file chunked by pvai's own window says `auto`, as it was asked (Llama Stack answers so too).
    chunking_strategy:
      link.chunking.chars === AUTO_CHUNKING.chars && link.chunking.overlapChars === AUTO_CHUNKING.overlapChars
        ? { type: 'auto' }
        : {
            type: 'static',
            static: {
              max_chunk_size_tokens: Math.round(link.chunking.chars / CHARS_PER_TOKEN),
              chunk_overlap_tokens: Math.round(link.chunking.overlapChars / CHARS_PER_TOKEN),
            },
          },
    attributes: link.attributes,
  };
}

export function batchBody(batch: BatchRecord, counts: FileCounts): Schema<'VectorStoreFileBatch'> {
  return {
    id: batch.id,
    object: 'vector_store.files_batch',
    created_at: seconds(batch.createdAt),
    vector_store_id: batch.vectorStoreId,
    status: batch.cancelled ? 'cancelled' : counts.in_progress > 0 ? 'in_progress' : 'completed',
    file_counts: counts,
  };
}

type ChunkingRequest = Schema<'ChunkingStrategyRequest'> | undefined;

/** A chunking strategy → the window in characters (`auto` or none: undefined, the store's or pvai's own). */
export function chunkWindow(strategy: ChunkingRequest, field: string): { chars: number; overlapChars: number } | null {
  if (!strategy || strategy.type === 'auto') return null;
  const fixed = strategy.static;
  if (!fixed) {
    throw new AppError('INVALID_PARAMETER', `${field}.static is required for a static strategy`, {
      field: `${field}.static`,
      reason: 'is required',
    });
  }
  if (fixed.chunk_overlap_tokens > fixed.max_chunk_size_tokens / 2) {
    throw new AppError('INVALID_PARAMETER', `${field}.static.chunk_overlap_tokens is at most half the chunk size`, {
      field: `${field}.static.chunk_overlap_tokens`,
      reason: 'must be at most half of max_chunk_size_tokens',
    });
  }
  return {
    chars: fixed.max_chunk_size_tokens * CHARS_PER_TOKEN,
    overlapChars: fixed.chunk_overlap_tokens * CHARS_PER_TOKEN,
  };
}

/** Attributes as the contract takes them, their keys within OpenAI's 64 characters. */
export function attributesOf(
  value: Record<string, string | number | boolean> | null | undefined,
  field: string,
): StoreFileRecord['attributes'] {
  const attributes = value ?? {};
  const long = Object.keys(attributes).find((key) => key.length > MAX_ATTRIBUTE_KEY);
  if (long !== undefined) {
    throw new AppError('INVALID_PARAMETER', `${field} keys are at most ${MAX_ATTRIBUTE_KEY} characters`, {
      field: `${field}.${long}`,
      reason: `key longer than ${MAX_ATTRIBUTE_KEY} characters`,
    });
  }
  return attributes;
}
