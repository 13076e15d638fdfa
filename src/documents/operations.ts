import { Extractor } from '../extract/index.js';
import { type Call, endUserOf, type Operations, requirePrincipal, type Schema } from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { DocumentService } from './document-service.js';
import type { ChunkMatch, DocumentRecord } from './types.js';
import { fromUpload } from './upload.js';

type DocumentOperationId = 'createDocument' | 'listDocuments' | 'getDocument' | 'deleteDocument' | 'searchDocuments';

export function documentBody(doc: DocumentRecord): Schema<'Document'> {
  const work = Math.max(1, doc.chunkCount) * 2;
  // Half the work is chunking (done all at once), half embedding (chunk by chunk).
  const done = doc.status === 'processing' ? doc.chunkCount + doc.chunksEmbedded : work;
  return {
    id: doc.id,
    object: 'document',
    user_id: doc.userId,
    title: doc.title,
    content_type: doc.contentType,
    size_bytes: doc.sizeBytes,
    chunk_count: doc.chunkCount,
    metadata: doc.metadata,
    created_at: new Date(doc.createdAt).toISOString(),
    status: doc.status,
    progress: Math.min(1, Math.round((done / work) * 1000) / 1000),
    failure: doc.failure,
  };
}

export function matchBody(m: ChunkMatch): Schema<'DocumentChunkMatch'> {
  return {
    document_id: m.documentId,
    chunk_id: m.id,
    title: m.title,
    snippet: m.text,
    score: m.score,
    page: m.page,
    char_start: m.charStart,
    char_end: m.charEnd,
  };
}

/**
 * /z1/rag: every operation is scoped by the key's account and the request's user_id; another
 * tenant's document id is 404, exactly as a missing one.
 */
export function documentOperations(
  documents: DocumentService,
  tiers: Pick<TierPolicy, 'checkRagK'>,
  extractor = new Extractor(),
): Operations<DocumentOperationId> {
  const tenantOf = (call: Call, userId: string) => {
    // Every document operation names its end user: so does its usage row (the user's export lists it).
    const principal = requirePrincipal(call);
    call.usage.userId = endUserOf(principal, userId);
    return { accountId: principal.account.id, userId };
  };
  return {
    createDocument: async ({ body }, call) => {
      if (call.upload) {
        const { userId, document } = await fromUpload(call.upload, extractor);
        const doc = await documents.create(tenantOf(call, userId), document);
        return { status: 201, body: documentBody(doc) };
      }
      const doc = await documents.create(tenantOf(call, body.user_id), {
        title: body.title,
        text: body.content,
        metadata: body.metadata,
        contentType: 'text/plain',
        sizeBytes: Buffer.byteLength(body.content),
      });
      return { status: 201, body: documentBody(doc) };
    },
    listDocuments: async ({ query }, call) => {
      const docs = await documents.list(tenantOf(call, query.user_id));
      return { status: 200, body: { object: 'list', data: docs.map(documentBody) } };
    },
    getDocument: async ({ params, query }, call) => {
      const doc = await documents.get(tenantOf(call, query.user_id), params.document_id);
      return { status: 200, body: documentBody(doc) };
    },
    deleteDocument: async ({ params, query }, call) => {
      await documents.delete(tenantOf(call, query.user_id), params.document_id);
      return { status: 200, body: { id: params.document_id, object: 'document.deleted', deleted: true } };
    },
    searchDocuments: async ({ body }, call) => {
      tiers.checkRagK(requirePrincipal(call).account, body.k, 'k');
      const matches = await documents.search(tenantOf(call, body.user_id), body.query, body.k ?? 5);
      return { status: 200, body: { object: 'list', data: matches.map(matchBody) } };
    },
  };
}
