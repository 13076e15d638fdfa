import type { ChunkIndex, Tenant } from '../retrieval/index.js';

/**
 * Memories share the documents' index (one collection or set of tables to run, back up and size) as
 * a kind of their own: every memory is indexed under the tenant `(account id + "#memory", user id)`.
 * Account ids are `acct_` + base62, so no account's documents can ever carry that key: a document
 * search never sees a memory, nor a memory search a document, by the same hard tenant filter that
 * keeps users apart. Closing is the owner's (the document service's) job.
 */
export function memoryKindOf(index: ChunkIndex): ChunkIndex {
  const kind = (t: Tenant): Tenant => ({ accountId: `${t.accountId}#memory`, userId: t.userId });
  return {
    name: `${index.name}/memory`,
    prepare: (embedding) => index.prepare(embedding),
    putChunks: (tenant, documentId, chunks) => index.putChunks(kind(tenant), documentId, chunks),
    putDocuments: (tenant, documents) => index.putDocuments(kind(tenant), documents),
    putVectors: (tenant, documentId, vectors) => index.putVectors(kind(tenant), documentId, vectors),
    deleteDocument: (tenant, documentId) => index.deleteDocument(kind(tenant), documentId),
    deleteTenant: (tenant) => index.deleteTenant(kind(tenant)),
    search: (tenant, query) => index.search(kind(tenant), query),
    close: async () => undefined,
  };
}
