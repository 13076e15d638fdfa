import {
  type Completion,
  type GenerationRequest,
  ProviderError,
  type ProviderErrorKind,
  type StreamPart,
} from '../types.js';
import type { LocalEngineSettings } from './local-engine.js';

/**
 * The messages between the server and a local model's engine process (`engine-process.ts`). A call (load, stream,
 * generate, close) is numbered by the server; the engine answers with the stream's parts, then one `end`.
 */
export type ToEngine =
  /** The model this process hosts, sent first. */
  | { t: 'open'; settings: LocalEngineSettings }
  | { t: 'load'; call: number }
  | { t: 'stream'; call: number; req: GenerationRequest }
  /** A whole answer, sent back in one message (`end`'s `completion`), for a caller that does not stream. */
  | { t: 'generate'; call: number; req: GenerationRequest }
  | { t: 'close'; call: number }
  | { t: 'abort'; call: number }
  /** The server has taken `parts` more parts of the call: the engine may run that much further ahead. */
  | { t: 'credit'; call: number; parts: number };

export type FromEngine =
  | { t: 'part'; call: number; part: WirePart }
  /** The call is over: its sequence is back in the pool. `aborted` when it ended because it was aborted. */
  | { t: 'end'; call: number; error?: WireError; aborted?: boolean; completion?: Completion }
  /** Requests holding a sequence and waiting for one, sent on each change (before the call's parts). */
  | { t: 'queue'; active: number; queued: number }
  /** A prompt was put in a sequence: its tokens reused from the sequence's cache and those evaluated. */
  | { t: 'prompt'; reused: number; evaluated: number };

/**
 * How far a stream's generation may run ahead of what the server has taken, in parts. A consumer that
 * stops reading stops the generation, as if the engine ran in the server, and keeps its sequence.
 */
export const STREAM_WINDOW = 16;
/** The server gives credit back this many parts at a time (one message, not one a token). */
export const CREDIT_BATCH = 8;

export type WirePart = Exclude<StreamPart, { type: 'error' }> | { type: 'error'; error: WireError };

/** An error as it crosses processes: a class does not survive structured cloning, its fields do. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
  provider?: { kind: ProviderErrorKind; retryable: boolean; status?: number; retryAfterMs?: number };
  cause?: WireError;
}

/** Causes deeper than this are cut: enough to read what failed, never a cycle. */
const MAX_CAUSE_DEPTH = 4;

export function toWireError(err: unknown, depth = 0): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const wire: WireError = { name: err.name, message: err.message };
  if (err.stack !== undefined) wire.stack = err.stack;
  if (err instanceof ProviderError) {
    wire.provider = { kind: err.kind, retryable: err.retryable };
    if (err.status !== undefined) wire.provider.status = err.status;
    if (err.retryAfterMs !== undefined) wire.provider.retryAfterMs = err.retryAfterMs;
  }
  if (err.cause !== undefined && depth < MAX_CAUSE_DEPTH) wire.cause = toWireError(err.cause, depth + 1);
  return wire;
}

/** The error again: a ProviderError with its kind, retryability and status, or an Error with its name. */
export function fromWireError(wire: WireError): Error {
  const cause = wire.cause === undefined ? undefined : fromWireError(wire.cause);
  let error: Error;
  if (wire.provider) {
    const { kind, ...options } = wire.provider;
    error = new ProviderError(kind, wire.message, { ...options, ...(cause === undefined ? {} : { cause }) });
  } else {
    error = new Error(wire.message, cause === undefined ? undefined : { cause });
    error.name = wire.name;
  }
  // The stack of where it was thrown, in the engine's process, is the one worth reading.
  if (wire.stack !== undefined) error.stack = wire.stack;
  return error;
}

export function toWirePart(part: StreamPart): WirePart {
  return part.type === 'error' ? { type: 'error', error: toWireError(part.error) } : part;
}

export function fromWirePart(part: WirePart): StreamPart {
  if (part.type !== 'error') return part;
  const error = fromWireError(part.error);
  return {
    type: 'error',
    error: error instanceof ProviderError ? error : new ProviderError('upstream', error.message, { cause: error }),
  };
}
