import { AppError } from '../../errors/index.js';
import { injectTraceContext, TRACING } from '../../tracing/index.js';
import type { Embedder } from '../types.js';
import { normalise } from './local-embedder.js';

export interface OpenAIEmbedderOptions {
  /** Base URL including `/v1` (vLLM, Ollama's OpenAI endpoint, a hosted API). */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** Texts per request (OpenAI accepts up to 2048 inputs; vLLM and Ollama batch them internally). */
  batchSize?: number;
  timeoutMs?: number;
}

interface EmbeddingsResponse {
  data?: Array<{ index: number; embedding: number[] }>;
  usage?: { prompt_tokens?: number };
}

/**
 * Any OpenAI-compatible `/embeddings` endpoint: texts in batches, answers put back in input order by
 * their `index` (the API does not promise order), vectors normalised (not every server does).
 */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  readonly #options: OpenAIEmbedderOptions;
  #dimension: number | undefined;

  constructor(options: OpenAIEmbedderOptions) {
    this.#options = options;
    this.id = `openai-compatible:${options.model}`;
  }

  async dimension(): Promise<number> {
    if (this.#dimension === undefined) {
      const [probe] = await this.embed(['dimension probe']);
      this.#dimension = probe?.length ?? 0;
    }
    return this.#dimension;
  }

  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
    onTokens?: (tokens: number) => void,
  ): Promise<Array<Float32Array | undefined>> {
    const size = this.#options.batchSize ?? 64;
    const out: Array<Float32Array | undefined> = [];
    for (let i = 0; i < texts.length; i += size) {
      out.push(...(await this.#batch(texts.slice(i, i + size), signal, onTokens)));
    }
    return out;
  }

  /** The call's headers; while tracing, with the embeddings span's `traceparent` (tracedEmbedder's). */
  #headers(apiKey: string | undefined): Record<string, string> {
    const headers = { 'Content-Type': 'application/json', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) };
    return TRACING.on ? injectTraceContext(headers) : headers;
  }

  async #batch(
    input: readonly string[],
    signal: AbortSignal | undefined,
    onTokens: ((tokens: number) => void) | undefined,
  ): Promise<Array<Float32Array | undefined>> {
    const { baseUrl, model, apiKey, timeoutMs = 30_000 } = this.#options;
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(`${baseUrl.replace(/\/$/, '')}/embeddings`, {
        method: 'POST',
        headers: this.#headers(apiKey),
        body: JSON.stringify({ model, input }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw unavailable(`could not be reached (${(err as Error).message})`);
    }
    // The API's answer when meaning cannot be computed now: 503, nothing written (memory), or the
    // document's INDEXING_FAILED with this message (ingestion).
    if (!res.ok) throw unavailable(`answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const body = (await res.json()) as EmbeddingsResponse;
    const data = body.data ?? [];
    if (data.length !== input.length) {
      throw new Error(`embeddings upstream returned ${data.length} vectors for ${input.length} texts`);
    }
    const tokens = body.usage?.prompt_tokens;
    if (typeof tokens === 'number' && Number.isSafeInteger(tokens) && tokens >= 0) onTokens?.(tokens);
    // An upstream that gives an empty vector for a text with no tokens: no vector, as the port says.
    return [...data]
      .sort((a, b) => a.index - b.index)
      .map((d) => (d.embedding.length > 0 ? normalise(d.embedding) : undefined));
  }

  async close(): Promise<void> {}
}

function unavailable(what: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', `The embedding upstream ${what}`);
}
