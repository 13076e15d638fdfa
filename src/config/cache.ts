import { z } from 'zod';
import { DEFAULT_CACHE_TTL_MS, DEFAULT_MEMORY_CACHE_MAX_BYTES } from '../cache/index.js';

const defaults = { maxBytes: DEFAULT_MEMORY_CACHE_MAX_BYTES, ttlSeconds: DEFAULT_CACHE_TTL_MS / 1000 };

export const cacheSchema = z
  .object({
    maxBytes: z.number().int().min(0).default(defaults.maxBytes),
    ttlSeconds: z.number().int().min(1).default(defaults.ttlSeconds),
  })
  .strict()
  .default(defaults);
