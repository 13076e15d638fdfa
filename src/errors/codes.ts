/**
 * The one catalogue of error codes and the HTTP status each maps to.
 * `satisfies Record<…>` makes the map exhaustive: adding a code without a status fails to compile.
 */
export const ERROR_STATUS = {
  INVALID_JSON: 400,
  /** A body whose Content-Encoding (gzip, deflate, br) does not decode. */
  INVALID_ENCODING: 400,
  /** A JSON body whose arrays and objects nest deeper than the limit. */
  NESTING_TOO_DEEP: 400,
  /** More than one credential (Authorization and X-API-Key disagreeing, or a repeated header). */
  AMBIGUOUS_CREDENTIALS: 400,
  /** HTTP the server cannot parse (framing, header syntax), answered before routing. */
  MALFORMED_REQUEST: 400,
  INVALID_PARAMETER: 400,
  /**
   * Text the service will not take: a string that is not well-formed Unicode (an unpaired surrogate), or
   * that holds U+0000, anywhere in a request; or a control character in an identifier (`user_id`, ids).
   */
  INVALID_TEXT: 400,
  /**
   * Input the models cannot read: a chat content part (`image_url`, `input_audio`, `file`), or token ids sent to
   * the embeddings endpoint (another tokenizer's ids). The models read text.
   */
  UNSUPPORTED_CONTENT: 400,
  INVALID_MODEL: 400,
  /** A search of a vector store past its `expires_after` (its index entries are gone). */
  VECTOR_STORE_EXPIRED: 400,
  RAG_K_EXCEEDS_TIER: 400,
  TIMEOUT_EXCEEDS_TIER: 400,
  /** An uploaded document with no text in it (an empty file, a scanned PDF without a text layer). */
  EMPTY_DOCUMENT: 400,
  /** An uploaded document that is corrupt, not in its stated format, or not decodable as text. */
  DOCUMENT_UNREADABLE: 400,
  /** A password-protected PDF: its text cannot be read without the password. */
  DOCUMENT_ENCRYPTED: 400,
  /** `use_web_search` on a service with no search provider configured (the message says how to set one). */
  WEB_SEARCH_UNAVAILABLE: 400,
  /**
   * `previous_response_id` ends a chain that cannot grow: 1,000 responses, or 16 MiB of conversation
   * (responses/chain.ts). Compacting it starts a short one.
   */
  PREVIOUS_RESPONSE_CHAIN_TOO_LONG: 400,
  /** An `Idempotency-Key` header that is empty, over 255 characters or not printable ASCII. */
  IDEMPOTENCY_KEY_INVALID: 400,
  UNAUTHORIZED: 401,
  /** A key past its `expires_at`: refused like a revoked key, but saying when it expired. */
  API_KEY_EXPIRED: 401,
  INSUFFICIENT_CREDITS: 402,
  /** The key's own credit budget (per UTC month, or in total) would be passed; the account may have credits. */
  KEY_BUDGET_EXCEEDED: 402,
  MODEL_NOT_ALLOWED: 403,
  /** A model outside the key's own allow-list (`models` of the key), though its tier may allow it. */
  MODEL_NOT_ALLOWED_FOR_KEY: 403,
  FEATURE_NOT_ALLOWED: 403,
  /** A key bound to one end user (`user_id` at its creation) used for another. */
  END_USER_NOT_ALLOWED: 403,
  /** The tier's number of files or vector stores is reached (delete some, or move up a tier). */
  QUOTA_EXCEEDED: 403,
  NOT_FOUND: 404,
  /** `previous_response_id` names no response this caller may continue (OpenAI's `previous_response_not_found`). */
  PREVIOUS_RESPONSE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  EXECUTION_TIMEOUT: 408,
  /** The request (its headers or its body) arrived too slowly. */
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  /** A request with the same `Idempotency-Key` is still running past the wait; retry after `Retry-After`. */
  IDEMPOTENCY_KEY_IN_USE: 409,
  /** The request with this `Idempotency-Key` ran once and its answer was over the size kept: it will not run again. */
  IDEMPOTENCY_RESPONSE_NOT_STORED: 409,
  /** The `Idempotency-Key` was used with a different request within the window. */
  IDEMPOTENCY_KEY_REUSED: 422,
  PAYLOAD_TOO_LARGE: 413,
  /** An upload that would take the account's stored files past its tier's total bytes. */
  STORAGE_LIMIT_EXCEEDED: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** The request's header section is over Node's limit (16 KiB), answered before routing. */
  HEADERS_TOO_LARGE: 431,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  SANDBOX_UNAVAILABLE: 503,
  SERVER_BUSY: 503,
  /** A connection refused before its request: its client address, or the server, holds too many open. */
  TOO_MANY_CONNECTIONS: 503,
  /** The caller's own share of a capacity shared between accounts (code execution) is full. */
  ACCOUNT_BUSY: 503,
  UPSTREAM_TIMEOUT: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}
