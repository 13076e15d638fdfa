import { AppError } from '../errors/index.js';
import type { RequestBody, Schema } from '../http/index.js';
import { EMBEDDING_MODEL_ID } from '../kernel/index.js';
import type { EmbeddingJob, EmbeddingResult } from './embedding-service.js';

type EmbeddingRequest = RequestBody<'createEmbedding'>;
export type EncodingFormat = NonNullable<EmbeddingRequest['encoding_format']>;

/**
 * The texts of `input`. Token ids (OpenAI's other two shapes, which LangChain sends after tokenizing with
 * tiktoken when `check_embedding_ctx_length` is true) are ids of another tokenizer's vocabulary: they would
 * mean nothing to this model, so they are refused with what to send instead.
 */
export function readInput(input: EmbeddingRequest['input']): Pick<EmbeddingJob, 'texts' | 'single'> {
  if (typeof input === 'string') return { texts: [input], single: true };
  if (input.every((item): item is string => typeof item === 'string')) return { texts: input, single: false };
  throw new AppError(
    'UNSUPPORTED_CONTENT',
    `input holds token ids; ${EMBEDDING_MODEL_ID} reads text: send the text itself ` +
      '(LangChain: check_embedding_ctx_length=False)',
    { field: 'input', reason: 'token ids are not text' },
  );
}

/**
 * A vector as JSON numbers, each the shortest decimal that reads back as the same float32 (9 significant digits
 * always do): `Math.fround` of every number is the vector's own value, and the text is ~40 % shorter than the
 * float32 values' full double expansions (`0.0298431702` rather than `0.029843170195817947`).
 */
function floats(vector: Float32Array): number[] {
  const out = new Array<number>(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = Number((vector[i] ?? 0).toPrecision(9));
  return out;
}

/** A vector as OpenAI sends `encoding_format: base64`: its float32 values, little-endian, in base64. */
function base64(vector: Float32Array): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] ?? 0, i * 4);
  return bytes.toString('base64');
}

export function embeddingListBody(result: EmbeddingResult, format: EncodingFormat): Schema<'EmbeddingList'> {
  const encode = format === 'base64' ? base64 : floats;
  return {
    object: 'list',
    data: result.vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encode(vector) })),
    model: EMBEDDING_MODEL_ID,
    usage: { prompt_tokens: result.tokens, total_tokens: result.tokens },
  };
}
