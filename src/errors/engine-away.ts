import { AppError } from './app-error.js';

/** The engines a request may need that live outside the process (or on its disk). */
export type Engine = 'database' | 'vector index';

/**
 * An engine could not be asked: refused connection, connection lost, the server shutting down or starting up,
 * a disk that is full. Adapters that know which engine failed throw this; failures of the database's drivers are
 * recognised by their shape (engineAwayOf), so every store needs no wrapping of its own.
 */
export class EngineAwayError extends Error {
  readonly engine: Engine;

  constructor(engine: Engine, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EngineAwayError';
    this.engine = engine;
  }
}

/** Node's codes for a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs for "could not ask": class 08 (connection exception), 57P01-57P03 (shutting down,
 * crashed, starting up), 53300 (too many connections), 40001/40P01 are not here (the caller retries those).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** SQLite's result codes for a database that could not be used now (locked past the busy timeout, I/O, full). */
const SQLITE_AWAY = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN)/;

/** node-postgres's own errors for a connection that ended or could not be had, which carry no code. */
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Client was closed and is not queryable',
];

interface ErrorShape {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
  cause?: unknown;
  driverError?: unknown;
  errors?: unknown;
  severity?: unknown;
}

/**
 * Which engine could not be asked, when `err` says one could not (else undefined: a refusal, a constraint, a bug).
 * Looks through what wrappers keep: TypeORM's `driverError`, `cause`, an AggregateError's `errors` (a connect to
 * a name with several addresses).
 */
export function engineAwayOf(err: unknown, depth = 0): Engine | undefined {
  if (err === null || typeof err !== 'object' || depth > 5) return undefined;
  if (err instanceof EngineAwayError) return err.engine;
  if (err instanceof AppError) return undefined;
  const e = err as ErrorShape;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined) {
    if (NETWORK_CODES.has(code)) return 'database';
    // A Unix socket that is not there (PostgreSQL over a socket path, stopped); not a missing file.
    if (code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return 'database';
    if (/^[0-9A-Z]{5}$/.test(code) && typeof e.severity === 'string' && isUnavailableSqlState(code)) return 'database';
    if (SQLITE_AWAY.test(code)) return 'database';
  }
  if (typeof e.message === 'string' && PG_CONNECTION_MESSAGES.some((m) => (e.message as string).includes(m))) {
    return 'database';
  }
  for (const inner of [e.driverError, e.cause]) {
    const engine = engineAwayOf(inner, depth + 1);
    if (engine) return engine;
  }
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const engine = engineAwayOf(inner, depth + 1);
      if (engine) return engine;
    }
  }
  return undefined;
}

/** Seconds a client is told to wait before retrying a request an absent engine refused. */
const ENGINE_RETRY_AFTER_S = 1;

/** The answer to a request an absent engine could not serve: 503 with Retry-After, naming the engine. */
export function engineAwayError(engine: Engine, cause?: unknown): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `The ${engine} could not be reached; retry in a moment`,
    { engine },
    { 'Retry-After': String(ENGINE_RETRY_AFTER_S) },
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Any thrown value as the AppError a client is told: our own as is, an absent engine as 503, anything else as
 * the 500 it is (the caller logs it). Every place that answers a failure (JSON, stream events, sockets,
 * background responses) goes through this one rule.
 */
export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const engine = engineAwayOf(err);
  if (engine) return engineAwayError(engine, err);
  return new AppError('INTERNAL_ERROR', 'Internal error', null, {}, { cause: err });
}
