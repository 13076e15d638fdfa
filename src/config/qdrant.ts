import { z } from 'zod';
import { numberVariable, sectionFromEnv } from './env-section.js';

/**
 * How pvai creates its Qdrant collection on a cluster (Qdrant's distributed mode): `shardNumber` shards
 * (PVAI_QDRANT_SHARD_NUMBER), each kept on `replicationFactor` nodes (PVAI_QDRANT_REPLICATION_FACTOR), a write
 * acknowledged once `writeConsistencyFactor` of a shard's replicas applied it (PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR).
 * 1/1/1 is one node's layout; a cluster's recommended values and why are in docs/configuration.md (Qdrant). Read
 * when the collection is created: an existing one keeps its own (a difference is logged at start).
 */
export const qdrantSchema = z
  .object({
    shardNumber: z.number().int().min(1, 'must be at least 1 (PVAI_QDRANT_SHARD_NUMBER)').default(1),
    replicationFactor: z.number().int().min(1, 'must be at least 1 (PVAI_QDRANT_REPLICATION_FACTOR)').default(1),
    writeConsistencyFactor: z
      .number()
      .int()
      .min(1, 'must be at least 1 (PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR)')
      .default(1),
  })
  .strict()
  .refine((q) => q.writeConsistencyFactor <= q.replicationFactor, {
    message:
      'writeConsistencyFactor (PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR) cannot exceed replicationFactor ' +
      '(PVAI_QDRANT_REPLICATION_FACTOR): a write would wait for more replicas than a shard has',
    path: ['writeConsistencyFactor'],
  })
  .default({ shardNumber: 1, replicationFactor: 1, writeConsistencyFactor: 1 });

const WHOLE = /^-?\d+$/;
const VARIABLES = {
  PVAI_QDRANT_SHARD_NUMBER: numberVariable('shardNumber', WHOLE, 'a whole number'),
  PVAI_QDRANT_REPLICATION_FACTOR: numberVariable('replicationFactor', WHOLE, 'a whole number'),
  PVAI_QDRANT_WRITE_CONSISTENCY_FACTOR: numberVariable('writeConsistencyFactor', WHOLE, 'a whole number'),
};

/** The PVAI_QDRANT_* variables over the file's `qdrant` object; a value that is not a whole number names its variable. */
export function qdrantFromEnv(
  env: Record<string, string | undefined>,
  file: unknown,
  fail: (message: string) => Error,
): Record<string, unknown> | undefined {
  return sectionFromEnv(env, file, VARIABLES, fail);
}
