import { AppError } from '../errors/index.js';
import { TRACING } from '../tracing/index.js';
import { tracedGenerate, tracedStream } from './model-spans.js';
import type { ChatProvider, Completion, GenerationRequest, StreamPart } from './types.js';
import { abortReason, ProviderError } from './types.js';

interface TargetBase {
  /** Model name at the target: sent upstream, or the local model's display name. */
  model: string;
  /** Default `maxTokens` when a request gives none. */
  maxTokens?: number;
}

export interface LocalTarget extends TargetBase {
  provider: 'local';
  /** GGUF path. Omitted: the factory resolves `model` to a path (see createProviderFactories). */
  modelPath?: string;
}

export interface OpenAICompatibleTarget extends TargetBase {
  provider: 'openai-compatible';
  baseUrl: string;
  apiKey?: string;
  timeoutMs?: number;
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryAfterMs?: number;
  headers?: Record<string, string>;
}

export type Target = LocalTarget | OpenAICompatibleTarget;

/** Builds the provider of a target. Factories may return the same instance for equal targets. */
export interface ProviderFactories {
  local(target: LocalTarget): ChatProvider;
  'openai-compatible'(target: OpenAICompatibleTarget): ChatProvider;
}

/** A request before routing: the target supplies `model`, and `maxTokens` when absent. */
export type RoutedRequest = Omit<GenerationRequest, 'model' | 'maxTokens'> & { maxTokens?: number };

/** Used when neither the request nor the target sets `maxTokens` (the contract's description of `max_tokens`). */
export const DEFAULT_MAX_TOKENS = 2000;

/**
 * A failed attempt as the tenant reads it (`details.attempts`): an upstream's is named by the PV model and says
 * what happened in the provider's public words, never the upstream's address, model name or own message.
 */
interface AttemptRecord {
  provider: Target['provider'];
  model: string;
  kind: ProviderError['kind'];
  status?: number;
  message: string;
}

/** A failed attempt as the server's log gets it: the target's model and the whole message. */
export interface FailedAttempt extends AttemptRecord {
  pvModel: string;
}

/** What the router logs with (pino's Logger has it). */
interface AttemptLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface RouterOptions {
  /** Each failed attempt, in full (the one place an upstream's address and words go). */
  onAttemptFailed?(attempt: FailedAttempt): void;
  /** Logs each failed attempt in full: a request refused as invalid at info, any other failure at warn. */
  log?: AttemptLog;
}

export interface Router {
  generate(pvModel: string, req: RoutedRequest, signal: AbortSignal): Promise<Completion>;
  stream(pvModel: string, req: RoutedRequest, signal: AbortSignal): AsyncIterable<StreamPart>;
  close(): Promise<void>;
}

/**
 * Routes a PV model to its targets, in order. A target failing with a retryable error or a timeout
 * (after its own retries) hands over to the next one; a stream hands over only while nothing has
 * been yielded. A non-retryable failure (e.g. a malformed request) ends routing at once.
 *
 * Errors (AppError, details `{attempts}`): every target failed → UPSTREAM_TIMEOUT if the last
 * failure was a timeout, SERVER_BUSY if it was a busy local engine, else UPSTREAM_ERROR; a request
 * the target rejected as malformed → INVALID_PARAMETER; unknown PV model → INVALID_MODEL.
 * An aborted signal is never turned into an AppError: its reason is rethrown as is.
 */
export function createRouter(
  targetsByModel: Record<string, Target[]>,
  factories: ProviderFactories,
  options: RouterOptions = {},
): Router {
  const routes = new Map<string, Array<{ target: Target; provider: ChatProvider }>>();
  for (const [pvModel, targets] of Object.entries(targetsByModel)) {
    routes.set(
      pvModel,
      targets.map((target) => ({
        target,
        provider: target.provider === 'local' ? factories.local(target) : factories['openai-compatible'](target),
      })),
    );
  }

  function routeOf(pvModel: string): Array<{ target: Target; provider: ChatProvider }> {
    const route = routes.get(pvModel);
    if (!route || route.length === 0)
      throw new AppError('INVALID_MODEL', `unknown model: ${pvModel}`, { model: pvModel });
    return route;
  }

  function requestFor(target: Target, req: RoutedRequest): GenerationRequest {
    return { ...req, model: target.model, maxTokens: req.maxTokens ?? target.maxTokens ?? DEFAULT_MAX_TOKENS };
  }

  return {
    async generate(pvModel, req, signal) {
      const attempts: AttemptRecord[] = [];
      for (const { target, provider } of routeOf(pvModel)) {
        try {
          const request = requestFor(target, req);
          return await (TRACING.on
            ? tracedGenerate(pvModel, target, provider, request, signal)
            : provider.generate(request, signal));
        } catch (err) {
          if (signal.aborted) throw abortReason(signal);
          if (!recordFailure(attempts, failedAttempt(pvModel, target, err, options))) break;
        }
      }
      throw routingError(pvModel, attempts);
    },

    async *stream(pvModel, req, signal) {
      const attempts: AttemptRecord[] = [];
      for (const { target, provider } of routeOf(pvModel)) {
        let yielded = false;
        try {
          const request = requestFor(target, req);
          const parts = TRACING.on
            ? tracedStream(pvModel, target, provider, request, signal)
            : provider.stream(request, signal);
          for await (const part of parts) {
            yielded = true;
            yield part.type === 'error'
              ? { type: 'error', error: midStream(pvModel, target, part.error, options) }
              : part;
          }
          return;
        } catch (err) {
          if (signal.aborted) throw abortReason(signal);
          if (yielded) throw err instanceof ProviderError ? midStream(pvModel, target, err, options) : err;
          if (!recordFailure(attempts, failedAttempt(pvModel, target, err, options))) break;
        }
      }
      throw routingError(pvModel, attempts);
    },

    async close() {
      const unique = new Set([...routes.values()].flat().map(({ provider }) => provider));
      await Promise.allSettled([...unique].map((provider) => provider.close()));
    },
  };
}

/** A failed attempt, logged in full; the error and what the tenant may read of it. */
function failedAttempt(
  pvModel: string,
  target: Target,
  err: unknown,
  options: RouterOptions,
): { error: ProviderError; record: AttemptRecord } {
  const error =
    err instanceof ProviderError
      ? err
      : new ProviderError('upstream', err instanceof Error ? err.message : String(err), { retryable: false });
  const status = error.status !== undefined ? { status: error.status } : {};
  const full = {
    pvModel,
    provider: target.provider,
    model: target.model,
    kind: error.kind,
    ...status,
    message: error.message,
  };
  options.onAttemptFailed?.(full);
  options.log?.[error.kind === 'bad-request' ? 'info' : 'warn'](full, 'a chat target failed');
  // The service's own engine says what it says (a prompt too long for its context); an upstream, nothing of itself.
  const local = target.provider === 'local';
  const record = {
    provider: target.provider,
    model: local ? target.model : pvModel,
    kind: error.kind,
    ...status,
    message: local ? error.message : error.publicMessage,
  };
  return { error, record };
}

/** A busy engine's estimate of when to retry, kept beside its record (the record itself is in the error body). */
const retryAfterOf = new WeakMap<AttemptRecord, number>();

/** Records a failed attempt; returns whether the next target may be tried. */
function recordFailure(attempts: AttemptRecord[], { error, record }: ReturnType<typeof failedAttempt>): boolean {
  attempts.push(record);
  if (error.retryAfterMs !== undefined) retryAfterOf.set(record, error.retryAfterMs);
  return error.retryable || error.kind === 'timeout';
}

/** A failure after parts went out, as the tenant reads it (see AttemptRecord); logged in full. */
function midStream(pvModel: string, target: Target, err: ProviderError, options: RouterOptions): ProviderError {
  const { record } = failedAttempt(pvModel, target, err, options);
  if (target.provider === 'local') return err;
  return new ProviderError(err.kind, `model ${pvModel}: ${record.message}`, {
    retryable: err.retryable,
    ...(err.status !== undefined ? { status: err.status } : {}),
  });
}

/**
 * The one mapping from a provider failure to the product's error: a malformed request is 400
 * INVALID_PARAMETER, a timeout 504 UPSTREAM_TIMEOUT, a busy local engine 503 SERVER_BUSY with
 * Retry-After, anything else 502 UPSTREAM_ERROR. Used for failures before and during a stream alike. The
 * tenant reads the error's public message, never an upstream's own (ProviderErrorOptions.publicMessage).
 */
export function productError(
  error: ProviderError,
  message = error.publicMessage,
  details?: Record<string, unknown>,
): AppError {
  const cause = { cause: error };
  switch (error.kind) {
    case 'bad-request':
      return new AppError('INVALID_PARAMETER', message, details, {}, cause);
    case 'timeout':
      return new AppError('UPSTREAM_TIMEOUT', message, details, {}, cause);
    case 'busy': {
      // The engine's own estimate of when a sequence is free, in whole seconds; 1 when it gave none.
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
      return new AppError('SERVER_BUSY', message, details, { 'Retry-After': String(seconds) }, cause);
    }
    default:
      return new AppError('UPSTREAM_ERROR', message, details, {}, cause);
  }
}

function routingError(pvModel: string, attempts: AttemptRecord[]): AppError {
  const last = attempts.at(-1);
  const details = { model: pvModel, attempts };
  if (!last) return new AppError('UPSTREAM_ERROR', `model ${pvModel}: no target answered`, details);
  const messages: Record<ProviderError['kind'], string> = {
    'bad-request': last.provider === 'local' ? last.message : `model ${pvModel}: ${last.message}`,
    timeout: `model ${pvModel}: upstream timed out`,
    busy: `model ${pvModel}: local engine is at capacity, retry shortly`,
    upstream: `model ${pvModel}: ${last.message}`,
  };
  const retryAfterMs = retryAfterOf.get(last);
  const error = new ProviderError(last.kind, last.message, retryAfterMs === undefined ? {} : { retryAfterMs });
  return productError(error, messages[last.kind], details);
}
