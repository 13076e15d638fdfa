import { AppError } from '../errors/index.js';
import { type CreditsPort, EMBEDDING_MODEL_ID, type Principal, payerOf } from '../kernel/index.js';
import type { EmbeddingLimits } from '../models/index.js';
import type { Embedder } from '../retrieval/index.js';

/** The texts of one request, as the handler read them. */
export interface EmbeddingJob {
  texts: readonly string[];
  /** `input` was one string (an error names `input`), not a list (`input[3]`). */
  single: boolean;
  /** The `dimensions` the client asked for, if any. */
  dimensions?: number | undefined;
}

export interface EmbeddingResult {
  /** One unit-length vector per text, in input order. */
  vectors: Float32Array[];
  /** Input tokens: the model's tokenizer's count, or the upstream's `usage` (else the estimate the price used). */
  tokens: number;
  /** Credits taken for the request. */
  credits: number;
}

export interface EmbeddingServiceDeps {
  /** The one embedding model of the service (RAG's and memory's), or undefined when the server has none. */
  embedder: Embedder | undefined;
  /** Atomic check-and-charge of the account and the key's budget; never below zero, never past the budget. */
  credits: CreditsPort;
  /** Credits a request of this many input tokens costs. */
  price(tokens: number): number;
  /** The window `/z1/models` reports for an embedding upstream, whose tokenizer pvai has not. */
  upstreamContextTokens: number;
}

/**
 * With an upstream, whose tokenizer pvai has not, a text is priced at one token per 4 characters: OpenAI's rule
 * of thumb for English (its tokenizer averages ~4 characters a token), which the client can compute too.
 */
const CHARACTERS_PER_ESTIMATED_TOKEN = 4;

/**
 * `POST /z1/embeddings` after validation: is there a model, do the texts fit it, can the account pay; then the
 * texts through the same Embedder port RAG and memory use (so a text gets the same vector on every path), and a
 * refund when that fails. Credits are taken before the work and never below zero, as chat does.
 */
export class EmbeddingService {
  readonly #deps: EmbeddingServiceDeps;

  constructor(deps: EmbeddingServiceDeps) {
    this.#deps = deps;
  }

  /** PV-EMBED's window and vector length, or undefined when the server has no embedding model. */
  async limits(): Promise<EmbeddingLimits | undefined> {
    const { embedder, upstreamContextTokens } = this.#deps;
    if (!embedder) return undefined;
    const window = embedder.tokenizer ? (await embedder.tokenizer.limits()).contextTokens : upstreamContextTokens;
    return { contextWindow: window, dimensions: await embedder.dimension() };
  }

  async embed(principal: Principal, job: EmbeddingJob, signal: AbortSignal): Promise<EmbeddingResult> {
    const embedder = this.#deps.embedder;
    if (!embedder) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        'Embeddings are not available on this server: it has no embedding model. Run scripts/setup (it puts ' +
          'all-MiniLM-L6-v2 into <dataDir>/models/embedding/), or set PVAI_EMBEDDING_MODEL or embeddingUpstream',
        { model: EMBEDDING_MODEL_ID },
      );
    }
    const dimension = await embedder.dimension();
    if (job.dimensions !== undefined && job.dimensions !== dimension) {
      throw new AppError(
        'INVALID_PARAMETER',
        `${EMBEDDING_MODEL_ID}'s vectors have ${dimension} dimensions and cannot be shortened: ` +
          `send dimensions ${dimension}, or leave it out`,
        { field: 'dimensions', reason: `must be ${dimension}`, dimensions: dimension },
      );
    }
    const counted = await this.#tokens(embedder, job);
    const credits = this.#deps.price(counted);
    const charge = await this.#deps.credits.charge(payerOf(principal), credits);
    if (!charge.ok) {
      throw new AppError(
        'INSUFFICIENT_CREDITS',
        `${job.texts.length} text(s) of ${counted} tokens cost ${credits} credits on ${EMBEDDING_MODEL_ID}; ` +
          `the balance is ${charge.balance}`,
        { required: credits, balance: charge.balance },
      );
    }
    try {
      let reported: number | undefined;
      const vectors = await embedder.embed(job.texts, signal, (tokens) => {
        reported = (reported ?? 0) + tokens;
      });
      const complete = await this.#complete(embedder, vectors, dimension, job);
      return { vectors: complete, tokens: embedder.tokenizer ? counted : (reported ?? counted), credits };
    } catch (err) {
      await this.#deps.credits.refund(charge.refund);
      throw signal.aborted ? signal.reason : err;
    }
  }

  /**
   * The request's input tokens. With the model's tokenizer each text is counted and one past the model's window
   * is refused, naming it (nothing is cut silently); an upstream's window is its own, so there the count is the
   * estimate the price uses.
   */
  async #tokens(embedder: Embedder, job: EmbeddingJob): Promise<number> {
    if (!embedder.tokenizer) {
      return job.texts.reduce((sum, text) => sum + Math.ceil(text.length / CHARACTERS_PER_ESTIMATED_TOKEN), 0);
    }
    const counts = await embedder.tokenizer.count(job.texts);
    const { contextTokens, maxTokensPerText } = await embedder.tokenizer.limits();
    const over = counts.findIndex((n) => n > maxTokensPerText);
    if (over >= 0) {
      const field = job.single ? 'input' : `input[${over}]`;
      throw new AppError(
        'INVALID_PARAMETER',
        `${field} is ${counts[over]} tokens; ${EMBEDDING_MODEL_ID} reads at most ${maxTokensPerText} tokens of one ` +
          `text (its window is ${contextTokens}): split the text`,
        { field, reason: "longer than the model's window", tokens: counts[over], max_tokens: maxTokensPerText },
      );
    }
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /**
   * A vector for every text. A text the local model reads nothing of gets the model's vector for the empty text
   * (what sentence-transformers gives it); an upstream that answers no vector, or one of another length, failed.
   */
  async #complete(
    embedder: Embedder,
    vectors: ReadonlyArray<Float32Array | undefined>,
    dimension: number,
    job: EmbeddingJob,
  ): Promise<Float32Array[]> {
    let empty: Float32Array | undefined;
    const out: Float32Array[] = [];
    for (const [i, vector] of vectors.entries()) {
      let v = vector;
      if (!v && embedder.tokenizer) {
        empty ??= await embedder.tokenizer.emptyText();
        v = empty;
      }
      if (!v || v.length !== dimension) {
        const field = job.single ? 'input' : `input[${i}]`;
        throw new AppError(
          'UPSTREAM_ERROR',
          `The embedding upstream answered ${v ? `a vector of ${v.length} dimensions, not ${dimension},` : 'no vector'} for ${field}`,
          { field },
        );
      }
      out.push(v);
    }
    return out;
  }
}
