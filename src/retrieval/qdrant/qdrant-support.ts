/** Small pieces of the Qdrant adapter: point ids, tenant filters, the recorded model, error messages. */
import { createHash } from 'node:crypto';
import { type QdrantClient, withHeaders } from '@qdrant/js-client-rest';
import { EngineAwayError } from '../../errors/index.js';
import { injectTraceContext } from '../../tracing/index.js';
import type { Tenant } from '../types.js';

/** The named dense vector (the embedding model's). */
export const DENSE = 'dense';
/** The named sparse vector: BM25 term weights, IDF applied by Qdrant at query time. */
export const LEXICAL = 'bm25';
/** Qdrant's built-in BM25 "model" (schema-1 collections): it tokenises, stems and weighs text server-side. */
const BM25_MODEL = 'qdrant/bm25';
/**
 * Qdrant's server-side BM25 options, for collections of schema 1 only (schema 2 is sent pvai's own sparse
 * vectors, qdrant-sparse.ts). The same at upsert and at query time (the sparse vectors are computed with
 * them, so a change needs a re-index). Accents folded, so `zurich` finds `Zürich` as the SQL index's
 * analysis does; otherwise Qdrant's defaults: lowercase, English stop words and Snowball stemming.
 */
const BM25_OPTIONS = { ascii_folding: true };

/** The text as Qdrant's server-side BM25 input (a `Document`). */
export function bm25(text: string) {
  return { text, model: BM25_MODEL, options: BM25_OPTIONS };
}

/**
 * A UUID derived from (account, user, chunk id): stable, so re-putting a chunk overwrites its point,
 * and tenant-bound, so the same chunk id under two tenants names two points.
 */
export function pointId(tenant: Tenant, chunkId: string): string {
  const hex = createHash('sha256')
    .update(JSON.stringify([tenant.accountId, tenant.userId, chunkId]))
    .digest('hex');
  // Version 8 (custom) and the RFC 4122 variant, so it is a well-formed UUID.
  const variant = ((Number.parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

/** `must` account and user (and document): the filter on every query, update and delete. */
export function tenantFilter(tenant: Tenant, documentId?: string) {
  const must = [
    { key: 'account_id', match: { value: tenant.accountId } },
    { key: 'user_id', match: { value: tenant.userId } },
  ];
  if (documentId !== undefined) must.push({ key: 'document_id', match: { value: documentId } });
  return { must };
}

export interface EmbeddingModel {
  id: string;
  dimension: number;
}

export interface CollectionState {
  /** Whether pvai's metadata is there (a collection pvai did not create has none). */
  pvai: boolean;
  embedding: EmbeddingModel | null;
  /** The dense vector's size, when the collection has one. */
  denseSize: number | undefined;
  /** pvai's layout version (1 when pvai's metadata has none: the first collections). */
  schema: number;
  /** How the collection is spread over a cluster (1/1/1 on one node). */
  cluster: ClusterLayout;
}

/** A collection's shards, replicas per shard, and replicas that must acknowledge a write. */
export interface ClusterLayout {
  shardNumber: number;
  replicationFactor: number;
  writeConsistencyFactor: number;
}

export async function readState(client: QdrantClient, collection: string): Promise<CollectionState | undefined> {
  const { exists } = await client.collectionExists(collection);
  if (!exists) return undefined;
  const info = await client.getCollection(collection);
  const config = info.config as typeof info.config & { metadata?: Record<string, unknown> | null };
  const pvai = config.metadata?.pvai as { embedding?: unknown; schema?: unknown } | undefined;
  const vectors = config.params.vectors as Record<string, { size?: number } | undefined> | undefined;
  const embedding = pvai?.embedding as Partial<EmbeddingModel> | null | undefined;
  return {
    pvai: pvai !== undefined && pvai !== null,
    embedding:
      embedding && typeof embedding.id === 'string' && typeof embedding.dimension === 'number'
        ? { id: embedding.id, dimension: embedding.dimension }
        : null,
    denseSize: vectors?.[DENSE]?.size,
    schema: typeof pvai?.schema === 'number' ? pvai.schema : 1,
    cluster: {
      shardNumber: config.params.shard_number ?? 1,
      replicationFactor: config.params.replication_factor ?? 1,
      writeConsistencyFactor: config.params.write_consistency_factor ?? 1,
    },
  };
}

/**
 * How an existing collection's layout differs from the configured one, as a warning, or undefined when it does
 * not. Nothing is changed: the shard number is fixed at creation, and a higher replication factor set on a
 * collection makes no new replica of an existing shard on a self-hosted cluster (each must be copied with
 * Qdrant's replicate_shard, a transfer an operator should start, not every replica of pvai at once).
 */
export function layoutDifferences(
  collection: string,
  actual: ClusterLayout,
  wanted: ClusterLayout,
): string | undefined {
  const names: Array<[keyof ClusterLayout, string, string]> = [
    ['shardNumber', 'shard_number', 'PVAI_QDRANT_SHARD_NUMBER'],
    ['replicationFactor', 'replication_factor', 'PVAI_QDRANT_REPLICATION_FACTOR'],
    ['writeConsistencyFactor', 'write_consistency_factor', 'PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR'],
  ];
  const differences = names
    .filter(([key]) => actual[key] !== wanted[key])
    .map(([key, name, env]) => `${name} is ${actual[key]}, ${env} asks ${wanted[key]}`);
  if (differences.length === 0) return undefined;
  return (
    `Qdrant collection "${collection}" exists with another layout (${differences.join('; ')}); it is used as it is. ` +
    'The settings apply to a collection pvai creates: the shard number cannot change after creation, a replication ' +
    "factor is raised with Qdrant's collection update plus a replicate_shard per shard (docs/configuration.md, Qdrant)."
  );
}

/** Why `wanted` cannot use an index built with `recorded`, or undefined when it can. */
export function embeddingMismatch(
  collection: string,
  recorded: EmbeddingModel,
  wanted: EmbeddingModel,
): string | undefined {
  if (recorded.id === wanted.id && recorded.dimension === wanted.dimension) return undefined;
  return (
    `Qdrant collection "${collection}" was built with embedding model "${recorded.id}" ` +
    `(${recorded.dimension} dimensions), but this server embeds with "${wanted.id}" (${wanted.dimension} dimensions); ` +
    'vectors of different models cannot be searched together. Configure the model the collection was built with, ' +
    'or point QDRANT_COLLECTION at a new collection and re-ingest the documents.'
  );
}

/** A cluster node's reason for a 500 when the replicas it needs cannot be reached (Qdrant 1.18's wording). */
const REPLICAS_AWAY = /currently unavailable|tcp connect error|no active replica/i;

/** A Qdrant failure as a message that says what failed, where, and Qdrant's reason (401 names the key). */
export function describeQdrantError(
  err: unknown,
  where: { url: string; collection: string; operation: string },
): Error {
  const failed = err as { status?: unknown; data?: { status?: { error?: unknown } } | string; message?: unknown };
  const at = `Qdrant ${where.operation} on collection "${where.collection}" at ${where.url}`;
  if (typeof failed?.status === 'number') {
    const reason =
      typeof failed.data === 'string'
        ? failed.data
        : typeof failed.data?.status?.error === 'string'
          ? failed.data.status.error
          : String(failed.message ?? '');
    if (failed.status === 401 || failed.status === 403) {
      return new Error(`${at} was refused (${failed.status} ${reason}): check QDRANT_API_KEY`, { cause: err });
    }
    // Qdrant saying it cannot serve now (a node down, a proxy in front without its backend) is an absent engine;
    // so is a cluster node's 500 for a shard none of whose replicas it can reach ("1 of 1 read operations failed:
    // … The service is currently unavailable", "No active replica"): more nodes are down than the replicas cover.
    if ((failed.status >= 502 && failed.status <= 504) || (failed.status === 500 && REPLICAS_AWAY.test(reason))) {
      return new EngineAwayError('vector index', `${at} failed (${failed.status}): ${reason}`, { cause: err });
    }
    return new Error(`${at} failed (${failed.status}): ${reason}`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : '';
  // No HTTP status: no answer at all (refused, reset, timed out): the vector index is away.
  return new EngineAwayError('vector index', `${at} failed: ${message}${cause}`, { cause: err });
}

/**
 * The client, each of its calls carrying the caller's trace (`traceparent`): the client reads `withHeaders`' headers
 * in its first middleware, which runs synchronously inside the call, so the headers are those of the context active
 * when the call is made (a search's `retrieval search` span, an ingestion job's). Used only when TRACING.on.
 */
export function carryingTrace(client: QdrantClient): QdrantClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => withHeaders(injectTraceContext({}), () => Reflect.apply(value, target, args));
    },
  });
}
