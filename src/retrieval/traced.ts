import { type Attributes, SpanKind, traced } from '../tracing/index.js';
import type { ChunkIndex, Embedder } from './types.js';

/** What the retrieval spans say of the index: its kind, and for Qdrant (a database of its own) `db.system`. */
function indexAttributes(index: ChunkIndex, operation: string): Attributes {
  const attributes: Attributes = { 'pvai.retrieval.index': index.name, 'db.operation.name': operation };
  if (index.name === 'qdrant') {
    attributes['db.system'] = 'qdrant';
    attributes['db.system.name'] = 'qdrant';
  }
  return attributes;
}

/**
 * The index with a span per query (`retrieval search`: the index kind, top k, mode, hit count) and per write of the
 * ingestion (`retrieval put_documents`, `retrieval put_vectors`: how many documents or vectors). Wrapped by
 * engines.ts only when TRACING.on: off, the index is called as it is. The query text is never recorded.
 */
export function tracedIndex(index: ChunkIndex): ChunkIndex {
  const kind = index.name === 'qdrant' ? SpanKind.CLIENT : SpanKind.INTERNAL;
  return {
    name: index.name,
    prepare: (embedding) => index.prepare(embedding),
    putChunks: (tenant, documentId, chunks) => index.putChunks(tenant, documentId, chunks),
    putDocuments: (tenant, documents) => {
      const attributes = indexAttributes(index, 'put_documents');
      attributes['pvai.retrieval.documents'] = documents.length;
      attributes['pvai.retrieval.chunks'] = documents.reduce((n, d) => n + d.chunks.length, 0);
      return traced('retrieval put_documents', attributes, () => index.putDocuments(tenant, documents), kind);
    },
    putVectors: (tenant, documentId, vectors) => {
      const attributes = indexAttributes(index, 'put_vectors');
      attributes['pvai.retrieval.vectors'] = vectors.length;
      return traced('retrieval put_vectors', attributes, () => index.putVectors(tenant, documentId, vectors), kind);
    },
    deleteDocument: (tenant, documentId) => index.deleteDocument(tenant, documentId),
    deleteTenant: (tenant) => index.deleteTenant(tenant),
    search: (tenant, query) => {
      const attributes = indexAttributes(index, 'search');
      attributes['pvai.retrieval.top_k'] = query.k;
      attributes['pvai.retrieval.mode'] = query.mode ?? 'hybrid';
      attributes['pvai.retrieval.dense'] = query.vector !== undefined;
      return traced(
        'retrieval search',
        attributes,
        async (span) => {
          const hits = await index.search(tenant, query);
          span.setAttribute('pvai.retrieval.hits', hits.length);
          return hits;
        },
        kind,
      );
    },
    close: () => index.close(),
  };
}

/**
 * The embedder with a span per call, by the GenAI conventions: `embeddings {model}`, kind CLIENT,
 * `gen_ai.operation.name` `embeddings`, the provider (`openai` for an upstream, `llama_cpp` for the model file),
 * the model, how many texts, and `gen_ai.usage.input_tokens` when the model counted them. An upstream's call
 * carries the span's trace. Wrapped by engines.ts only when TRACING.on. The texts are never recorded.
 */
export function tracedEmbedder(embedder: Embedder): Embedder {
  const upstream = embedder.id.startsWith('openai-compatible:');
  const model = embedder.id.slice(embedder.id.indexOf(':') + 1);
  const provider = upstream ? 'openai' : 'llama_cpp';
  const wrapped: Embedder = {
    id: embedder.id,
    dimension: () => embedder.dimension(),
    embed: (texts, signal, onTokens) =>
      traced(
        `embeddings ${model}`,
        {
          'gen_ai.operation.name': 'embeddings',
          'gen_ai.provider.name': provider,
          'gen_ai.system': provider,
          'gen_ai.request.model': model,
          'pvai.embeddings.texts': texts.length,
        },
        async (span) => {
          let tokens: number | undefined;
          const vectors = await embedder.embed(texts, signal, (n) => {
            tokens = (tokens ?? 0) + n;
            onTokens?.(n);
          });
          span.setAttribute('gen_ai.response.model', model);
          if (tokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', tokens);
          return vectors;
        },
        SpanKind.CLIENT,
      ),
    close: () => embedder.close(),
  };
  if (embedder.tokenizer) return { ...wrapped, tokenizer: embedder.tokenizer };
  return wrapped;
}
