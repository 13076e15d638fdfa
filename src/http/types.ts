import type { Readable } from 'node:stream';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Principal } from '../kernel/index.js';

/**
 * The types the HTTP layer's files share: the request's state as Koa carries it, what the body readers
 * leave in it, and the handler's view of it (Call). Only types, importing nothing of the layer, so the
 * files that fill the state (body.ts, multipart.ts) and those that read it (call.ts, openapi.ts, app.ts)
 * depend on this file instead of on each other.
 */

/** The body as the handler sees it: the text, and the parsed JSON (`undefined` for no body). */
interface ReadBody {
  text: string;
  json: unknown;
}

/** A multipart/form-data body: its text fields and its one file. */
export interface Upload {
  fields: Record<string, string>;
  file?: { field: string; filename: string; contentType: string; data: Buffer };
}

/** The one file part of a streamed multipart body, as it arrives. */
export interface UploadPart {
  field: string;
  filename: string;
  contentType: string;
  /** The bytes; it fails with the error `tooLarge` made once more than the limit have come. */
  stream: Readable;
}

/**
 * A multipart/form-data body left unread for its handler (the contract's `x-upload: stream`): the handler reads it
 * after authentication and admission, its file handed to `sink` as it arrives (never held whole in memory).
 */
export interface StreamedUpload {
  read<T>(
    sink: (part: UploadPart) => Promise<T>,
    limit: { bytes: number; tooLarge: () => Error },
  ): Promise<{ fields: Record<string, string>; file: T | undefined }>;
}

/** What a request said and was answered, as text (chat and responses), for the request logs. */
export interface RequestContent {
  input: string | null;
  output: string | null;
}

/** What the usage row of a request records beyond status and latency; handlers fill it in. */
export interface UsageNote {
  model: string | null;
  /**
   * The end user the request names (`user_id`, or OpenAI's `user`), when it names one: kept on the usage row
   * so that the user's rows can be exported, and made anonymous when the user is erased.
   */
  userId?: string | undefined;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  cached: boolean;
  /** The client left before a streamed answer was complete (its status line said 200). */
  clientClosed: boolean;
  /** `performance.now()` when the first token of the answer was ready (chat), for time to first token. */
  firstTokenAt?: number | undefined;
  /** The status of the error that ended a stream after its 200 status line (e.g. 502 upstream failure). */
  failedStatus?: number | undefined;
  /** The `code` of the error answered (error-middleware.ts), or of the one that ended a stream after its 200. */
  errorCode?: string | undefined;
  /** Input and answer text, noted by chat and responses only for an account with `log_content` on. */
  content?: RequestContent | undefined;
}

/** The request's own context, as the HTTP layer gives it to a handler. */
export interface Call {
  readonly requestId: string;
  readonly log: Logger;
  /** The caller, for operations behind an API key (after authentication and the rate limiter). */
  readonly principal: Principal | undefined;
  /** Notes for this request's usage row. */
  readonly usage: UsageNote;
  /**
   * Aborted with a ClientDisconnectedError when the client goes away before the response is complete, or
   * with a 503 AppError when the server stops waiting for work in flight (HttpPorts.stopping).
   */
  disconnectSignal(): AbortSignal;
  /** The form and file of a multipart/form-data request (its `body` is then undefined). */
  readonly upload?: Upload | undefined;
  /** A multipart/form-data body of an `x-upload: stream` operation, still to be read. */
  readonly streamedUpload?: StreamedUpload | undefined;
}

export interface RequestState {
  requestId: string;
  startedAt: number;
  log: Logger;
  operationId?: string;
  /** The contract's path template of the operation (`/z1/files/{file_id}`), once routed. */
  route?: string;
  principal?: Principal;
  usage: UsageNote;
  /** The trace id of the request's server span, when tracing is on (HttpPorts.tracing). */
  traceId?: string;
  /** The request body, read and parsed by the body reader (absent for requests without one). */
  body?: ReadBody;
  /** Set by streamed responses: settles when the stream has ended, with the final token counts noted. */
  streamDone?: Promise<void>;
  /** The operation's handler was called (the request passed authentication, the rate limiter and validation). */
  executing?: true;
  /** The stream was cut because its client stopped reading (its usage row records STREAM_STALLED). */
  streamStalled?: true;
  /** A multipart/form-data body, for operations whose contract accepts one. */
  upload?: Upload;
  streamedUpload?: StreamedUpload;
}

export type AppContext = Koa.ParameterizedContext<RequestState>;
