import { hash } from 'node:crypto';
import { canonicalJsonOrUndefined } from './canonical-json.js';

/**
 * The parts of a chat completion request the key is built from. Any request
 * object with these fields can be passed as is; fields not named in the key
 * (see responseCacheKey) are ignored.
 */
export interface CacheKeyInput {
  /** Pass the resolved model id, so re-pointing an alias can't serve old answers. */
  model: string;
  messages: readonly unknown[];
  temperature?: number | null;
  top_p?: number | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  seed?: number | null;
  stop?: string | readonly string[] | null;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  n?: number | null;
  logit_bias?: Readonly<Record<string, number>> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  response_format?: unknown;
  tools?: readonly unknown[] | null;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  use_rag?: boolean | null;
  rag_k?: number | null;
  use_web_search?: boolean | null;
  /** The Responses API's file_search and web_search settings (absent for chat: the key is as before). */
  rag_filter?: unknown;
  rag_min_score?: number | null;
  web_pages?: number | null;
  web_domains?: readonly string[] | null;
  /**
   * Set by the pipeline: the version of each context source that takes part (memory, documents, web…),
   * by source name. Each changes whenever what its source would read changes.
   */
  context?: Readonly<Record<string, string>>;
  /** Part of the key only when a context source takes part (their content is per user). */
  user_id?: string | null;
  // Accepted so a whole request can be passed; they never change the answer,
  // so they never change the key (a streamed and a non-streamed request share
  // a cached answer).
  stream?: boolean | null;
  stream_options?: unknown;
  skip_cache?: boolean | null;
  user?: string | null;
}

/** Bump when the key's shape changes, so old entries simply stop matching. */
const KEY_SCHEMA_VERSION = 2;

/**
 * The cache key for `request` made by `accountId`: the lowercase hex SHA-256
 * of the canonical JSON (see canonical-json.ts: object keys sorted at every
 * depth, undefined omitted, no whitespace) of
 *
 *   { v: 2, account, model, messages,
 *     sampling: { temperature, top_p, max_tokens, max_completion_tokens, seed,
 *                 stop, presence_penalty, frequency_penalty, n, logit_bias,
 *                 logprobs, top_logprobs, response_format },
 *     tools, tool_choice, parallel_tool_calls, use_rag, rag_k, use_web_search,
 *     rag_filter, rag_min_score, web_pages, web_domains, context, user_id }
 *
 * where
 * - `account` scopes entries: two accounts never share a key;
 * - a top-level field given as null counts as absent (OpenAI treats an
 *   explicit null as "use the default"), so it is omitted like undefined;
 * - `context` holds the versions of the context sources that take part, by
 *   name (omitted when none does);
 * - `user_id` is included only when `context` has an entry, because only then
 *   can two users of one account get different answers;
 * - stream, stream_options, skip_cache, user and any field not listed above
 *   are left out: they don't change the answer.
 * Besides the fields the product documents, the OpenAI parameters that do
 * change the answer (max_completion_tokens, n, logit_bias, logprobs,
 * top_logprobs, parallel_tool_calls) are included, so a pipeline that honours
 * them can't be served a wrong answer; when absent they leave the key as is.
 */
export function responseCacheKey(accountId: string, request: CacheKeyInput): string {
  return hash('sha256', canonicalObject(cacheKeyMaterial(accountId, request)), 'hex');
}

/** The object whose canonical JSON is hashed (see responseCacheKey). */
export function cacheKeyMaterial(accountId: string, request: CacheKeyInput): KeyMaterial {
  const context = request.context && Object.keys(request.context).length > 0 ? request.context : undefined;
  const personalised = context !== undefined;
  return {
    v: KEY_SCHEMA_VERSION,
    account: accountId,
    model: request.model,
    messages: request.messages,
    sampling: {
      temperature: presentOrUndefined(request.temperature),
      top_p: presentOrUndefined(request.top_p),
      max_tokens: presentOrUndefined(request.max_tokens),
      max_completion_tokens: presentOrUndefined(request.max_completion_tokens),
      seed: presentOrUndefined(request.seed),
      stop: presentOrUndefined(request.stop),
      presence_penalty: presentOrUndefined(request.presence_penalty),
      frequency_penalty: presentOrUndefined(request.frequency_penalty),
      n: presentOrUndefined(request.n),
      logit_bias: presentOrUndefined(request.logit_bias),
      logprobs: presentOrUndefined(request.logprobs),
      top_logprobs: presentOrUndefined(request.top_logprobs),
      response_format: presentOrUndefined(request.response_format),
    },
    tools: presentOrUndefined(request.tools),
    tool_choice: presentOrUndefined(request.tool_choice),
    parallel_tool_calls: presentOrUndefined(request.parallel_tool_calls),
    use_rag: presentOrUndefined(request.use_rag),
    rag_k: presentOrUndefined(request.rag_k),
    use_web_search: presentOrUndefined(request.use_web_search),
    rag_filter: presentOrUndefined(request.rag_filter),
    rag_min_score: presentOrUndefined(request.rag_min_score),
    web_pages: presentOrUndefined(request.web_pages),
    web_domains: presentOrUndefined(request.web_domains),
    context,
    user_id: personalised ? presentOrUndefined(request.user_id) : undefined,
  };
}

type KeyMaterial = Record<string, unknown> & { sampling: Record<string, unknown> };

/** Each level's keys, sorted once (the material's shape is fixed), with their JSON-quoted form. */
const MATERIAL_KEYS = sortedKeys(cacheKeyMaterial('', { model: '', messages: [] }));
const SAMPLING_KEYS = sortedKeys(cacheKeyMaterial('', { model: '', messages: [] }).sampling);

function sortedKeys(o: object): ReadonlyArray<readonly [string, string]> {
  return Object.keys(o)
    .sort()
    .map((key) => [key, `${JSON.stringify(key)}:`] as const);
}

/**
 * canonicalJson(material), written without sorting its two fixed levels on every request; nested
 * values (messages, tools, …) go through canonicalJson as before. A test holds the two equal.
 */
function canonicalObject(material: KeyMaterial): string {
  let out = '{';
  for (const [key, quoted] of MATERIAL_KEYS) {
    const written =
      key === 'sampling' ? writeFixed(material.sampling, SAMPLING_KEYS) : canonicalJsonOrUndefined(material[key]);
    if (written === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${quoted}${written}`;
  }
  return `${out}}`;
}

function writeFixed(o: Record<string, unknown>, keys: ReadonlyArray<readonly [string, string]>): string {
  let out = '{';
  for (const [key, quoted] of keys) {
    const written = canonicalJsonOrUndefined(o[key]);
    if (written === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${quoted}${written}`;
  }
  return `${out}}`;
}

function presentOrUndefined<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}
