import { type ErrorCode, statusOf } from './codes.js';

export type ErrorDetails = Record<string, unknown> | null;

/** Every failure the product reports on purpose. The HTTP layer turns it into the error body. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = null, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  get status(): number {
    return statusOf(this.code);
  }
}

/** The error body of the interface: `{status: "error", message, code, details}`. */
export interface ErrorBody {
  status: 'error';
  message: string;
  code: ErrorCode;
  details: ErrorDetails;
}

export function errorBody(err: AppError): ErrorBody {
  return { status: 'error', message: err.message, code: err.code, details: err.details };
}
