import { type ErrorCode, statusOf } from './codes.js';

export type ErrorDetails = Record<string, unknown> | null;

/** Every failure the product reports on purpose. The HTTP layer turns it into the error body. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers: Readonly<Record<string, string>>;

  /** `cause`: the failure this one reports, kept for the logs (never in the error body). */
  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = null,
    headers: Record<string, string> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return statusOf(this.code);
  }
}

/** OpenAI's error `type`, which its clients group errors by. */
type OpenAIErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'insufficient_quota'
  | 'permission_error'
  | 'rate_limit_error'
  | 'server_error';

/**
 * The error body of the interface, `{status: "error", message, code, details}`, with the same error beside it
 * as OpenAI's clients read it (`error: {message, type, code, param}`): the openai SDKs, LangChain and the AI
 * SDK show `error.message`, and without it showed only "Bad Request".
 */
export interface ErrorBody {
  status: 'error';
  message: string;
  code: ErrorCode;
  details: ErrorDetails;
  error: { message: string; type: OpenAIErrorType; code: string; param: string | null };
}

function openAIType(status: number): OpenAIErrorType {
  if (status >= 500) return 'server_error';
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'insufficient_quota';
    case 403:
      return 'permission_error';
    case 429:
      return 'rate_limit_error';
    default:
      return 'invalid_request_error';
  }
}

/** The one builder of error bodies: every error path (JSON, raw socket answers, SSE error events) uses it. */
export function errorBody(err: AppError): ErrorBody {
  const field = err.details?.field;
  return {
    status: 'error',
    message: err.message,
    code: err.code,
    details: err.details,
    error: {
      message: err.message,
      type: openAIType(err.status),
      code: err.code.toLowerCase(),
      param: typeof field === 'string' ? field : null,
    },
  };
}
