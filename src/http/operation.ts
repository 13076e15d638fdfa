import type { Readable } from 'node:stream';
import type { components, operations } from '../../generated/contract/schema.js';
import type { Streamed } from './json-stream.js';
import type { Call } from './types.js';

/**
 * The contract's operations as TypeScript types, generated from openapi/openapi.yaml by openapi-typescript
 * (generated/contract/schema.ts). A handler takes its operation's request and returns one of the replies
 * the document allows for it: a body or a status the document does not have is a compile error
 * (test/types/contract-types.ts holds cases that must stay errors). Errors are thrown as AppError and
 * rendered by the error middleware, so replies are the non-error responses only.
 */
export type OperationId = keyof operations;
export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

type Op<K extends OperationId> = operations[K];
type JsonOf<C> = C extends { 'application/json': infer B } ? B : never;

/** The validated JSON body; `undefined` for operations without one (or when it is optional and absent). */
export type RequestBody<K extends OperationId> =
  Op<K> extends { requestBody: infer R }
    ? JsonOf<NonNullable<R> extends { content: infer C } ? C : never>
    : Op<K> extends { requestBody?: infer R }
      ? JsonOf<NonNullable<R> extends { content: infer C } ? C : never> | undefined
      : undefined;

type ParamsIn<K extends OperationId, Where extends 'path' | 'query' | 'header'> = Op<K>['parameters'] extends infer P
  ? P extends Record<Where, infer V>
    ? [V] extends [never]
      ? Record<string, never>
      : NonNullable<V>
    : P extends Partial<Record<Where, infer V>>
      ? [V] extends [never]
        ? Record<string, never>
        : NonNullable<V>
      : Record<string, never>
  : never;

/** What a handler receives: the request as ajv validated it against the document. */
export interface OperationRequest<K extends OperationId> {
  body: RequestBody<K>;
  params: ParamsIn<K, 'path'>;
  query: ParamsIn<K, 'query'>;
  /** The header parameters the contract declares for the operation (names in lower case), as sent. */
  headers: ParamsIn<K, 'header'>;
}

type ErrorBody = Schema<'Error'>;
type Responses<K extends OperationId> = Op<K>['responses'];

/** A streamed answer: the HTTP layer pipes `stream` and records usage when `finished` settles. */
interface StreamReply<S> {
  status: S;
  type: 'text/event-stream';
  headers?: Record<string, string>;
  stream: Readable;
  finished: Promise<void>;
}

/** Bytes streamed as they are read (a stored file's): `type` is the file's own media type. */
interface BinaryStreamReply<S> {
  status: S;
  type: string;
  headers?: Record<string, string>;
  stream: Readable;
  finished: Promise<void>;
}

/**
 * A JSON body written while it is read (json-stream.ts): the document's shape, where a list may be an
 * AsyncIterable of its items. For bodies too large to build in memory (an end user's export).
 */
interface JsonStreamReply<S, B> {
  status: S;
  streamed: Streamed<B>;
  headers?: Record<string, string>;
}

type RepliesFor<S, R> = R extends { content: infer C }
  ? {
      [T in keyof C & string]: T extends 'text/event-stream'
        ? StreamReply<S>
        : T extends 'application/octet-stream'
          ? BinaryStreamReply<S>
          : C[T] extends ErrorBody
            ? never
            : T extends 'application/json'
              ? { status: S; type?: T; body: C[T]; headers?: Record<string, string> } | JsonStreamReply<S, C[T]>
              : // Other media types carry the data serialised (YAML, HTML, text): the handler gives the text.
                { status: S; type: T; body: string; headers?: Record<string, string> };
    }[keyof C & string]
  : { status: S; headers?: Record<string, string> };

/** Every reply the document allows for operation K, error bodies excluded (those are thrown). */
export type Reply<K extends OperationId> = {
  [S in keyof Responses<K> & number]: RepliesFor<S, Responses<K>[S]>;
}[keyof Responses<K> & number];

/** Any operation's reply, as the HTTP layer writes it. */
export type AnyReply =
  | StreamReply<number>
  | BinaryStreamReply<number>
  | JsonStreamReply<number, unknown>
  | { status: number; type?: string; body?: unknown; headers?: Record<string, string> };

export type Operation<K extends OperationId> = (
  request: OperationRequest<K>,
  call: Call,
) => Promise<Reply<K>> | Reply<K>;

/** A capability's operations, keyed by operationId. */
export type Operations<K extends OperationId = OperationId> = { [P in K]: Operation<P> };
