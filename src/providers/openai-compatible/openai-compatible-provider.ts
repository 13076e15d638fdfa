import { type Dispatcher, Pool } from 'undici';
import { injectTraceContext, TRACING } from '../../tracing/index.js';
import { newToolCallId } from '../completion-collector.js';
import {
  abortReason,
  type ChatProvider,
  type Completion,
  type FinishReason,
  type GenerationRequest,
  ProviderError,
  type StreamPart,
  type Usage,
} from '../types.js';
import { AttemptDeadline } from './attempt-deadline.js';
import { AttemptTimeoutError, type BufferedResponse, bufferedRequest } from './buffered-request.js';
import {
  type RetryPolicy,
  retryDelayFor,
  sleep,
  statusError,
  tenantHints,
  transportError,
  type UpstreamErrorFields,
} from './retry-policy.js';
import { parseSseData } from './sse-parser.js';
import {
  buildRequestBody,
  estimateUsage,
  parseChunk,
  parseCompletion,
  upstreamErrorFields,
  upstreamErrorMessage,
} from './wire-format.js';

export interface OpenAICompatibleSettings {
  /** API root, e.g. `http://127.0.0.1:8000/v1`; requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  apiKey?: string;
  /** Model name sent upstream when the request does not carry one. */
  model: string;
  /** Longest wait for a whole non-streamed answer; for streams, for the first byte and between chunks. Default 60000. */
  timeoutMs?: number;
  /** Retries after the first attempt (429, 5xx, connection errors). Default 2. */
  maxRetries?: number;
  /** First backoff step, doubled per retry, plus jitter. Default 200. */
  retryBaseDelayMs?: number;
  /** Longest Retry-After honoured; longer ones stop retrying (the router falls back). Default 5000. */
  maxRetryAfterMs?: number;
  /** Extra headers on every request (e.g. OpenRouter's HTTP-Referer). */
  headers?: Record<string, string>;
  /** Name in logs and errors (never in what a tenant reads). Default `openai-compatible:<host>/<model>`. */
  id?: string;
}

const OPENAI_COMPATIBLE_DEFAULTS = {
  timeoutMs: 60_000,
  maxRetries: 2,
  retryBaseDelayMs: 200,
  maxRetryAfterMs: 5_000,
} as const;

const MAX_ERROR_BODY_CHARS = 2_000;

/**
 * ChatProvider for any server speaking OpenAI chat completions (vLLM, llama.cpp server, Ollama,
 * hosted APIs), over a keep-alive undici pool of its own.
 *
 * Timeouts: `timeoutMs` bounds a whole non-streamed answer, and for a stream the wait for its start
 * and each silence between chunks (so a long but steadily streaming answer is fine). Aborting `signal` aborts the HTTP request, so the upstream
 * sees the disconnect and can stop generating.
 */
export class OpenAICompatibleProvider implements ChatProvider {
  readonly id: string;
  private readonly url: string;
  /** One keep-alive pool for the one origin this provider talks to (no per-request origin routing). */
  private readonly pool: Pool;
  private readonly path: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;

  constructor(private readonly settings: OpenAICompatibleSettings) {
    const base = settings.baseUrl.replace(/\/+$/, '');
    this.url = base.endsWith('/chat/completions') ? base : `${base}/chat/completions`;
    this.id = settings.id ?? `openai-compatible:${new URL(this.url).host}/${settings.model}`;
    const url = new URL(this.url);
    this.pool = new Pool(url.origin, { keepAliveTimeout: 30_000 });
    this.path = `${url.pathname}${url.search}`;
    this.headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
      ...settings.headers,
    };
    this.timeoutMs = settings.timeoutMs ?? OPENAI_COMPATIBLE_DEFAULTS.timeoutMs;
    const baseDelayMs = settings.retryBaseDelayMs ?? OPENAI_COMPATIBLE_DEFAULTS.retryBaseDelayMs;
    this.retry = {
      maxRetries: settings.maxRetries ?? OPENAI_COMPATIBLE_DEFAULTS.maxRetries,
      baseDelayMs,
      maxDelayMs: Math.max(baseDelayMs, 10_000),
      maxRetryAfterMs: settings.maxRetryAfterMs ?? OPENAI_COMPATIBLE_DEFAULTS.maxRetryAfterMs,
    };
  }

  async generate(req: GenerationRequest, signal: AbortSignal): Promise<Completion> {
    const body = JSON.stringify(buildRequestBody(req, req.model || this.settings.model, false));
    for (let attempt = 0; ; attempt++) {
      try {
        const json: unknown = JSON.parse(await this.postForText(body, signal));
        const parsed = parseCompletion(json);
        if (!parsed) {
          throw new ProviderError(
            'upstream',
            `${this.id} sent an unexpected body: ${upstreamErrorMessage(json) ?? 'no choices'}`,
            { retryable: false, publicMessage: 'the upstream sent an answer that is not a chat completion' },
          );
        }
        const completionChars =
          (parsed.text?.length ?? 0) + parsed.toolCalls.reduce((sum, call) => sum + call.function.arguments.length, 0);
        return {
          text: parsed.text,
          toolCalls: parsed.toolCalls,
          finishReason: parsed.finishReason,
          usage: parsed.usage ?? estimateUsage(req, completionChars),
        };
      } catch (err) {
        await this.backoffOrThrow(this.failureOf(err, err instanceof AttemptTimeoutError, signal), attempt, signal);
      }
    }
  }

  /**
   * Retries only while nothing has been yielded; once a part is out, a failure becomes a final
   * `error` part (the client already has half an answer, a second answer would be spliced onto it).
   */
  async *stream(req: GenerationRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
    const body = JSON.stringify(buildRequestBody(req, req.model || this.settings.model, true));
    for (let attempt = 0; ; attempt++) {
      const deadline = new AttemptDeadline(signal, this.timeoutMs);
      let yielded = false;
      let response: Dispatcher.ResponseData | undefined;
      try {
        response = await this.post(body, deadline.signal);
        for await (const part of this.readStream(response, req, deadline)) {
          yielded = true;
          yield part;
        }
        return;
      } catch (err) {
        deadline.dispose();
        const failure = this.failureOf(err, deadline.timedOut, signal);
        if (!yielded) {
          await this.backoffOrThrow(failure, attempt, signal);
          continue;
        }
        if (signal.aborted || !(failure instanceof ProviderError)) throw failure;
        yield { type: 'error', error: failure };
        return;
      } finally {
        deadline.dispose();
        // Early exit (consumer stopped, or failure): close the connection so the upstream stops generating.
        if (response && !response.body.readableEnded) response.body.destroy();
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  /** The request every attempt sends; undici's timeouts are backstops only (each attempt keeps its own precise timer). */
  private dispatchOptions(body: string): Dispatcher.DispatchOptions {
    return {
      path: this.path,
      method: 'POST',
      // The active trace (the model call's span) goes upstream as `traceparent`, when tracing is on.
      headers: TRACING.on ? injectTraceContext({ ...this.headers }) : this.headers,
      body,
      headersTimeout: this.timeoutMs + 1_000,
      bodyTimeout: this.timeoutMs + 1_000,
    };
  }

  /** A streamed answer: the response, its body still to be read. */
  private async post(body: string, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
    const response = await this.pool.request({ ...this.dispatchOptions(body), signal });
    if (response.statusCode >= 200 && response.statusCode < 300) return response;
    const text = await response.body.text().catch(() => '');
    throw this.statusFailure(response.statusCode, response.headers, text);
  }

  /** A whole answer's body, read without a stream (see bufferedRequest). */
  private async postForText(body: string, signal: AbortSignal): Promise<string> {
    const response = await bufferedRequest(this.pool, this.dispatchOptions(body), signal, this.timeoutMs);
    if (response.statusCode >= 200 && response.statusCode < 300) return response.body;
    throw this.statusFailure(response.statusCode, response.headers, response.body);
  }

  private statusFailure(statusCode: number, headers: BufferedResponse['headers'], text: string): ProviderError {
    let message = text.slice(0, MAX_ERROR_BODY_CHARS);
    let fields: UpstreamErrorFields = {};
    try {
      const json: unknown = JSON.parse(text);
      message = upstreamErrorMessage(json) ?? message;
      fields = upstreamErrorFields(json);
    } catch {
      // not JSON: keep the raw text
    }
    // What the upstream's fields may not carry to a tenant: where it is, and what it is called.
    const url = new URL(this.url);
    const secrets = [url.host, url.hostname, this.settings.model, this.id];
    return statusError(statusCode, headers['retry-after'], message, this.id, tenantHints(fields, secrets));
  }

  /** What an attempt's failure means: the caller's abort reason, a timeout, or a classified ProviderError. */
  private failureOf(err: unknown, timedOut: boolean, signal: AbortSignal): unknown {
    if (signal.aborted) return abortReason(signal);
    if (timedOut)
      return new ProviderError('timeout', `${this.id} did not answer within ${this.timeoutMs} ms`, {
        cause: err,
        publicMessage: 'the upstream did not answer in time',
      });
    return transportError(err, this.id);
  }

  /** Waits before the next attempt, or throws `failure` when it must not be retried. */
  private async backoffOrThrow(failure: unknown, attempt: number, signal: AbortSignal): Promise<void> {
    if (!(failure instanceof ProviderError)) throw failure;
    const delay = retryDelayFor(failure, attempt, this.retry);
    if (delay === undefined) throw failure;
    await sleep(delay, signal);
  }

  private async *readStream(
    response: Dispatcher.ResponseData,
    req: GenerationRequest,
    deadline: AttemptDeadline,
  ): AsyncGenerator<StreamPart> {
    let finishReason: FinishReason | undefined;
    let usage: Usage | undefined;
    let done = false;
    let completionChars = 0;
    const callsSeen = new Set<number>();
    for await (const data of parseSseData(touchOnEachChunk(response.body, deadline))) {
      // Keep reading after [DONE] until the body ends, so the keep-alive connection stays reusable.
      if (done) continue;
      if (data === '[DONE]') {
        done = true;
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw new ProviderError('upstream', `${this.id} sent malformed stream data`, {
          retryable: false,
          publicMessage: 'the upstream sent malformed stream data',
        });
      }
      const errorMessage = upstreamErrorMessage(json);
      if (errorMessage !== undefined) {
        throw new ProviderError('upstream', `${this.id} stream error: ${errorMessage}`, {
          publicMessage: 'the upstream reported an error in its stream',
        });
      }
      const chunk = parseChunk(json);
      for (const part of chunk.parts) {
        // The first fragment of each call must carry an id (some servers never send one).
        if (part.type === 'tool-call-delta' && !callsSeen.has(part.index)) {
          callsSeen.add(part.index);
          part.id ??= newToolCallId();
        }
        completionChars +=
          part.type === 'text-delta'
            ? part.text.length
            : part.type === 'tool-call-delta'
              ? part.argumentsDelta.length
              : 0;
        yield part;
      }
      finishReason = chunk.finishReason ?? finishReason;
      usage = chunk.usage ?? usage;
    }
    if (!done && finishReason === undefined) {
      throw new ProviderError('upstream', `${this.id} stream ended before the answer was complete`, {
        retryable: true,
        publicMessage: 'the upstream stream ended before the answer was complete',
      });
    }
    yield { type: 'finish', finishReason: finishReason ?? 'stop', usage: usage ?? estimateUsage(req, completionChars) };
  }
}

/** Every byte from the upstream proves it is alive: restart the idle countdown. */
async function* touchOnEachChunk(
  body: AsyncIterable<Uint8Array>,
  deadline: AttemptDeadline,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    deadline.touch();
    yield chunk;
  }
}
