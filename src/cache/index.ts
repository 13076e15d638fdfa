export { cacheFor } from './cache-for.js';
export type { CacheKeyInput } from './cache-key.js';
export { responseCacheKey } from './cache-key.js';

export { createMemoryCache, DEFAULT_MEMORY_CACHE_MAX_BYTES } from './memory-cache.js';
export type { SqlQuery } from './postgres-cache.js';
export { createPostgresCache } from './postgres-cache.js';
export type { CachedResponse, ResponseCache } from './response-cache.js';
export { DEFAULT_CACHE_TTL_MS } from './response-cache.js';
