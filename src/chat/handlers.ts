import { PassThrough } from 'node:stream';
import { AppError } from '../errors/index.js';
import { toAppError } from '../http/error-middleware.js';
import {
  bodyOf,
  ClientDisconnectedError,
  clientDisconnectSignal,
  type OperationHandlers,
  requirePrincipal,
} from '../http/handler.js';
import type { Services } from '../http/services.js';
import type { AppContext } from '../http/state.js';
import { ProviderError, type StreamPart } from '../providers/index.js';
import type { PreparedChat } from './chat-service.js';
import { checkTierAllowsChat, checkToolChoice } from './policy.js';
import type { ChatCompletionRequest } from './request.js';
import { pipeAsSse } from './sse.js';
import { completionBody, replayAsParts } from './wire.js';

function providerFailure(err: unknown, bodyLimit: number): AppError {
  if (err instanceof ProviderError) {
    const code = err.kind === 'timeout' ? 'UPSTREAM_TIMEOUT' : err.kind === 'busy' ? 'SERVER_BUSY' : 'UPSTREAM_ERROR';
    return new AppError(code, err.message);
  }
  return toAppError(err, bodyLimit);
}

/** What a call that failed before the response started throws: a client that left is no failure. */
function failureToThrow(err: unknown, bodyLimit: number): Error {
  return err instanceof ClientDisconnectedError ? err : providerFailure(err, bodyLimit);
}

function setResponseHeaders(ctx: AppContext, prepared: PreparedChat): void {
  ctx.set('X-Cache', prepared.cache);
  ctx.set('X-Credits-Charged', String(prepared.credits));
  ctx.state.usage.credits = prepared.credits;
  ctx.state.usage.cached = prepared.cache === 'HIT';
}

function noteTokens(
  ctx: AppContext,
  prepared: PreparedChat,
  usage: { promptTokens: number; completionTokens: number },
) {
  // A cache hit processed no tokens; its body still reports the original usage.
  if (prepared.cache === 'HIT') return;
  ctx.state.usage.promptTokens = usage.promptTokens;
  ctx.state.usage.completionTokens = usage.completionTokens;
}

async function respondJson(ctx: AppContext, prepared: PreparedChat, signal: AbortSignal, bodyLimit: number) {
  let completion = prepared.cached;
  if (!completion) {
    try {
      completion = await prepared.generate(signal);
    } catch (err) {
      await prepared.refund();
      throw failureToThrow(err, bodyLimit);
    }
    await prepared.remember(completion);
  }
  setResponseHeaders(ctx, prepared);
  noteTokens(ctx, prepared, completion.usage);
  ctx.status = 200;
  ctx.body = completionBody(prepared.meta, completion);
}

async function respondStream(ctx: AppContext, prepared: PreparedChat, signal: AbortSignal, bodyLimit: number) {
  const parts = prepared.cached ? toAsyncIterator(replayAsParts(prepared.cached)) : prepared.stream(signal);
  // Failures before the first part still get a JSON error response and cost nothing.
  let first: IteratorResult<StreamPart>;
  try {
    first = await parts.next();
  } catch (err) {
    await prepared.refund();
    throw failureToThrow(err, bodyLimit);
  }
  const firstPart = first.done ? undefined : first.value;
  if (!firstPart || firstPart.type === 'error') {
    await prepared.refund();
    throw providerFailure(firstPart ? firstPart.error : new Error('empty stream'), bodyLimit);
  }
  setResponseHeaders(ctx, prepared);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('X-Accel-Buffering', 'no');
  const out = new PassThrough();
  ctx.body = out;
  ctx.state.streamDone = pipeAsSse(firstPart, parts, prepared.meta, out, (err) => providerFailure(err, bodyLimit)).then(
    async (outcome) => {
      if (outcome.clientClosed) ctx.state.usage.clientClosed = true;
      if (outcome.completion) {
        noteTokens(ctx, prepared, outcome.completion.usage);
        if (!prepared.cached) await prepared.remember(outcome.completion);
      }
      if (outcome.error) ctx.state.log.warn({ code: outcome.error.code }, 'stream ended with an error');
      await parts.return?.();
    },
  );
}

function toAsyncIterator<T>(items: Iterable<T>): AsyncIterator<T> {
  const it = items[Symbol.iterator]();
  return { next: async () => it.next() };
}

export function chatHandlers(services: Services): OperationHandlers {
  return {
    createChatCompletion: async (c, ctx) => {
      const principal = requirePrincipal(ctx);
      const request = bodyOf<ChatCompletionRequest>(c);
      checkToolChoice(request);
      checkTierAllowsChat(request, principal.account, services.config.tiers[principal.account.tier]);
      ctx.state.usage.model = request.model;
      const signal = clientDisconnectSignal(ctx);
      const prepared = await services.chat.chat.prepare(principal, request);
      if (request.stream) await respondStream(ctx, prepared, signal, services.config.bodyLimitBytes);
      else await respondJson(ctx, prepared, signal, services.config.bodyLimitBytes);
    },
  };
}
