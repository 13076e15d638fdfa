import type { Tenant } from '../retrieval/index.js';

/**
 * The tenant a vector store's documents live under: its account, and a user id no end user can have (end-user
 * ids hold no control character; this one starts with U+0001). A store's chunks are then isolated, indexed and
 * searched exactly as an end user's documents are, by the same engine, and no end user's search, export or
 * erase can reach them.
 */
export function storeTenant(accountId: string, vectorStoreId: string): Tenant {
  return { accountId, userId: `\u0001vector_store:${vectorStoreId}` };
}
