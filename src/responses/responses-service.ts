import { PassThrough } from 'node:stream';
import type { CacheStatus, ChatCompletionRequest, ChatService, Citation } from '../chat/index.js';
import type { Clock } from '../clock/index.js';
import { AppError, asAppError } from '../errors/index.js';
import { ClientDisconnectedError } from '../http/index.js';
import type { Principal } from '../kernel/index.js';
import { type ChatMessage, contentText, type FinishReason, type ToolCall, type Usage } from '../providers/index.js';
import type { CodeRunner } from '../sandbox/index.js';
import { type ResponseState, responseBody, type Totals } from './body.js';
import { CODE_TOOL_NAME } from './code-interpreter.js';
import { type EventSink, ResponseEvents, sseSink } from './events.js';
import { finishResponse } from './finish.js';
import {
  type HostedState,
  hostedCall,
  type Opened,
  openHosted,
  runHostedCalls,
  withApprovalId,
} from './hosted-calls.js';
import { newId } from './input.js';
import type { McpConnectorPort } from './mcp-toolbox.js';
import { functionCallItem, messageItem, searchItems } from './output.js';
import { type PreparedResponse, type PrepareOptions, prepareResponse } from './prepare.js';
import {
  type Accounting,
  cancelledBy,
  ResponseCancelledError,
  type RunOptions,
  type RunOutcome,
} from './run-outcome.js';
import { type RoundAnswer, type RoundProgress, streamRound } from './stream-round.js';
import type {
  ConversationPort,
  OutputItem,
  ResponseBody,
  ResponseCreateBody,
  ResponseStore,
  StoredResponse,
} from './types.js';

/** Items of calls pvai ran between model calls: streamed whole once they ran. */
const HOSTED_ITEMS = new Set(['code_interpreter_call', 'mcp_call', 'mcp_approval_request']);

/** The slot of an item that opened in a stream and is not complete yet (a failed stream leaves some). */
const OPENING: OutputItem = { id: '', type: 'message', status: 'in_progress' };

export type { Accounting, PreparedResponse, PrepareOptions, RunOptions, RunOutcome };
export { ResponseCancelledError };

export interface ResponsesServiceDeps {
  chat: Pick<ChatService, 'complete' | 'stream'>;
  store: ResponseStore;
  sandbox: CodeRunner;
  clock: Clock;
  conversations?: ConversationPort | undefined;
  /** pvai's MCP client, for `mcp` tools (none: a request naming one gets its servers' listing failed). */
  mcp?: McpConnectorPort | undefined;
  /** The answer limit of a model's route, echoed as `max_output_tokens` when a request sets none. */
  defaultMaxOutputTokens(model: ResponseCreateBody['model']): number;
  /** The temperature of a model's route, for a request that sets none (undefined: the contract's). */
  defaultTemperature?(model: ResponseCreateBody['model']): number | undefined;
  /** Whether a model's route reads images (`input_image` parts reach it); text only when absent. */
  readsImages?(model: ResponseCreateBody['model']): boolean;
}

/** The state of one response across its model calls (more than one when code or MCP tools run between them). */
interface Run extends HostedState {
  /** The first call's request (the MCP servers' tools among its tools): what later calls are made from. */
  base: ChatCompletionRequest;
  accounting: Accounting;
  citations: Citation[];
  memoryContext: ResponseBody['memory_context'];
  finishReason: FinishReason;
}

function add(totals: Totals, usage: Usage, cache: CacheStatus): void {
  totals.input += usage.promptTokens;
  totals.output += usage.completionTokens;
  if (cache === 'HIT') totals.cached += usage.promptTokens;
}

/**
 * The Responses API as a second wire format over the chat pipeline: each model call is a ChatService call
 * (routing, context sources, credits, cache, the same as a chat completion), and this service only reads the
 * request into one, runs the sandbox between calls when the model asks for code, and writes the output items.
 * A response is answered whole (`complete`) or as events into a sink (`run`: Server-Sent Events, a WebSocket, the
 * background queue's log).
 */
export class ResponsesService {
  readonly #deps: ResponsesServiceDeps;

  constructor(deps: ResponsesServiceDeps) {
    this.#deps = deps;
  }

  /** The request read and checked (`prepare.ts`): nothing is called or stored. */
  prepare(principal: Principal, body: ResponseCreateBody, options: PrepareOptions): Promise<PreparedResponse> {
    return prepareResponse(this.#deps, principal, body, options);
  }

  /** The response as it is before it runs: `queued` (background) or `in_progress`, no output, no usage. */
  startingBody(p: PreparedResponse, state: 'queued' | 'in_progress'): ResponseBody {
    return this.#bodyOf(p, [], state, undefined, { items_retrieved: 0, retrieval_time_ms: 0 }, null);
  }

  /**
   * A whole response. A failure of the first model call is the HTTP error a chat completion would be
   * (refunded); one after it (a later call, after code ran) ends the response as `failed`, with the items
   * made so far, as a stream does.
   */
  async complete(
    principal: Principal,
    p: PreparedResponse,
    signal: AbortSignal,
  ): Promise<{ body: ResponseBody; accounting: Accounting; record: StoredResponse }> {
    const opened = await openHosted(p, this.#deps.mcp, principal, signal);
    try {
      return await this.#completeOpened(principal, p, opened, signal);
    } finally {
      await opened.mcp?.close();
    }
  }

  async #completeOpened(
    principal: Principal,
    p: PreparedResponse,
    opened: Opened,
    signal: AbortSignal,
  ): Promise<{ body: ResponseBody; accounting: Accounting; record: StoredResponse }> {
    let run: Run | undefined;
    let failed: AppError | undefined;
    let request = this.#firstRequest(p, opened);
    for (;;) {
      let answer: Awaited<ReturnType<ChatService['complete']>>;
      try {
        answer = await this.#deps.chat.complete(principal, request, signal);
      } catch (err) {
        if (!run || !(err instanceof AppError)) throw err;
        failed = err;
        break;
      }
      run ??= this.#start(p, opened, answer.meta.citations ?? [], answer.meta.memoryContext, answer.cache);
      // The sources this call was given: its answer's [n] name them.
      run.citations = answer.meta.citations ?? [];
      run.accounting.credits += answer.credits;
      add(run.accounting.totals, answer.completion.usage, answer.cache);
      const { text, toolCalls, finishReason } = answer.completion;
      const round: RoundAnswer = { text, calls: [], finishReason, usage: answer.completion.usage };
      if (text) {
        const status = finishReason === 'length' ? 'incomplete' : 'completed';
        round.message = { item: messageItem(newId('msg'), text, run.citations, status) };
      }
      for (const call of toolCalls) {
        round.calls.push(
          hostedCall(call.function.name, opened.mcp) ? { call } : { call, item: functionCallItem(newId('fc'), call) },
        );
      }
      const next = await this.#afterRound(p, run, round, signal);
      if (!next) break;
      request = next;
    }
    const body = this.#body(p, run, failed ?? 'done');
    const record = await this.#finish(p, run, body);
    return { body, accounting: run.accounting, record };
  }

  /**
   * A response as events into `sink`: the first model call is made here (a failure before its first part is
   * thrown, refunded, as for a chat stream); the events are written by `done`, which resolves when the response
   * ended (completed, incomplete, failed, cancelled, or its reader left).
   */
  async run(
    principal: Principal,
    p: PreparedResponse,
    signal: AbortSignal,
    sink: EventSink,
    options: RunOptions = {},
  ): Promise<{ accounting: Accounting; done: Promise<RunOutcome> }> {
    const opened = await openHosted(p, this.#deps.mcp, principal, signal);
    let first: Awaited<ReturnType<ChatService['stream']>>;
    try {
      first = await this.#deps.chat.stream(principal, this.#firstRequest(p, opened), signal);
    } catch (err) {
      await opened.mcp?.close();
      throw err;
    }
    const run = this.#start(p, opened, first.meta.citations ?? [], first.meta.memoryContext, first.cache);
    const hosted = (name: string) => hostedCall(name, opened.mcp);
    run.accounting.credits += first.credits;
    const events = new ResponseEvents(sink, options.firstSequence);
    // The round under way: a cancel keeps its message as far as it was written.
    let progress: RoundProgress = { text: null };
    const keepCut = () => {
      if (progress.message && progress.text !== null && run.output[progress.message.index] === OPENING) {
        run.output[progress.message.index] = messageItem(
          progress.message.id,
          progress.text,
          run.citations,
          'incomplete',
        );
      }
    };
    const done = (async (): Promise<RunOutcome> => {
      let failed: AppError | undefined;
      try {
        await events.started(this.#body(p, run, 'in_progress'));
        for (const item of run.output) await events.wholeItem(run.output.indexOf(item), item);
        let parts = first.parts;
        let cache = first.cache;
        for (;;) {
          progress = { text: null };
          const outcome = await streamRound(parts, events, run.citations, () => this.#nextIndex(run), progress, hosted);
          if (cancelledBy(signal)) break;
          if ('failed' in outcome) {
            failed = outcome.failed;
            break;
          }
          add(run.accounting.totals, outcome.answer.usage, cache);
          const before = run.output.length;
          const next = await this.#afterRound(p, run, outcome.answer, signal);
          // Code runs and MCP calls this round added: shown once they ran.
          for (const item of run.output.slice(before)) {
            if (HOSTED_ITEMS.has(item.type)) await events.wholeItem(run.output.indexOf(item), item);
          }
          if (!next || cancelledBy(signal)) break;
          try {
            const answer = await this.#deps.chat.stream(principal, next, signal);
            run.accounting.credits += answer.credits;
            run.citations = answer.meta.citations ?? [];
            parts = answer.parts;
            cache = answer.cache;
          } catch (err) {
            if (cancelledBy(signal)) break;
            if (!(err instanceof AppError)) throw err;
            failed = err;
            break;
          }
        }
        if (cancelledBy(signal)) keepCut();
        const body = this.#body(p, run, cancelledBy(signal) ? 'cancelled' : (failed ?? 'done'));
        await events.finished(body);
        const record = await this.#finish(p, run, body);
        if (body.status === 'cancelled') return { body, record, cancelled: true };
        return failed ? { body, record, failed } : { body, record };
      } catch (err) {
        if (cancelledBy(signal)) {
          keepCut();
          const body = this.#body(p, run, 'cancelled');
          await events.finished(body).catch(() => undefined);
          return { body, record: await this.#finish(p, run, body), cancelled: true };
        }
        if (err instanceof ClientDisconnectedError || signal.aborted) return { clientClosed: true as const };
        // Whatever else went wrong, the reader hears it as the response's failure, not as a cut stream.
        const error = asAppError(err);
        const body = this.#body(p, run, error);
        await events.finished(body).catch(() => undefined);
        return { body, failed: error, ...(err instanceof AppError ? {} : { cause: err }) };
      } finally {
        await opened.mcp?.close();
      }
    })();
    return { accounting: run.accounting, done };
  }

  /** `run` as a Server-Sent-Events body (POST /z1/responses with `stream`). */
  async stream(
    principal: Principal,
    p: PreparedResponse,
    signal: AbortSignal,
  ): Promise<{ out: PassThrough; accounting: Accounting; done: Promise<RunOutcome> }> {
    const out = new PassThrough();
    const started = await this.run(principal, p, signal, sseSink(out));
    const done = started.done.finally(() => out.end());
    return { out, accounting: started.accounting, done };
  }

  #firstRequest(p: PreparedResponse, opened: Opened): ChatCompletionRequest {
    return p.plan.forceCode
      ? { ...opened.request, tool_choice: { type: 'function', function: { name: CODE_TOOL_NAME } } }
      : opened.request;
  }

  #start(
    p: PreparedResponse,
    opened: Opened,
    citations: Citation[],
    memoryContext: Run['memoryContext'],
    cache: CacheStatus,
  ): Run {
    const query = contentText(p.plan.conversation.filter((m) => m.role === 'user').at(-1)?.content ?? null);
    return {
      output: [...opened.items, ...searchItems(p.plan.builtIns, query, citations, p.plan.include)],
      conversation: [...opened.conversation],
      accounting: { credits: 0, cache, totals: { input: 0, output: 0, cached: 0 } },
      citations,
      memoryContext,
      finishReason: 'stop',
      hostedRuns: 0,
      mcp: opened.mcp,
      base: opened.request,
    };
  }

  /** Output items are numbered in the order they appear: a streamed item takes its number (a slot) as it opens. */
  #nextIndex(run: Run): number {
    run.output.push(OPENING);
    return run.output.length - 1;
  }

  /**
   * After a model call: its items into the output, its turn into the conversation; code it asked for runs in
   * the sandbox (within `max_tool_calls`), and the next call's request is returned. Undefined: the response is
   * complete (a text answer, or function calls for the client to run).
   */
  async #afterRound(
    p: PreparedResponse,
    run: Run,
    round: RoundAnswer,
    signal: AbortSignal,
  ): Promise<ChatCompletionRequest | undefined> {
    run.finishReason = round.finishReason;
    const placed = (item: OutputItem, index: number | undefined) => {
      if (index === undefined) run.output.push(item);
      else run.output[index] = item;
    };
    if (round.message) placed(round.message.item, round.message.index);
    for (const { item, index } of round.calls) if (item) placed(item, index);
    for (const entry of round.calls) if (!entry.item) entry.call = withApprovalId(entry.call, run.mcp);
    const calls: ToolCall[] = round.calls.map((c) => c.call);
    const hosted = round.calls.filter((c) => !c.item).map((c) => c.call);
    run.conversation.push({
      role: 'assistant',
      content: round.text,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    });
    if (hosted.length === 0) return undefined;
    const { stop } = await runHostedCalls(this.#deps.sandbox, p, run, hosted, signal);
    // Function calls beside the hosted ones are the client's to run: the response ends with them, its own answered.
    if (stop || hosted.length < round.calls.length) return undefined;
    const system: ChatMessage[] = p.body.instructions ? [{ role: 'system', content: p.body.instructions }] : [];
    const { tool_choice: choice, ...rest } = run.base;
    // A tool was called: "required" (or a named tool) is satisfied, and forcing it again would never end.
    const after = choice === 'required' || typeof choice === 'object' ? 'auto' : choice;
    return {
      ...rest,
      ...(after ? { tool_choice: after } : {}),
      messages: [...system, ...run.conversation],
      learn: false,
    };
  }

  #body(p: PreparedResponse, run: Run, state: 'in_progress' | 'done' | 'cancelled' | AppError): ResponseBody {
    const ended = state !== 'in_progress';
    return this.#bodyOf(
      p,
      ended ? run.output.filter((o) => o !== OPENING) : [],
      state === 'done' ? run.finishReason : state,
      ended ? run.accounting.totals : undefined,
      run.memoryContext,
      state === 'done' || state === 'cancelled' ? Math.floor(this.#deps.clock() / 1000) : null,
    );
  }

  #bodyOf(
    p: PreparedResponse,
    output: OutputItem[],
    state: ResponseState,
    totals: Totals | undefined,
    memoryContext: ResponseBody['memory_context'],
    completedAt: number | null,
  ): ResponseBody {
    return responseBody({
      id: p.id,
      createdAt: p.createdAt,
      completedAt,
      request: p.body,
      userId: p.tenant.userId,
      conversationId: p.conversationId,
      maxOutputTokens: p.maxOutputTokens,
      temperature: p.temperature,
      output,
      state,
      totals,
      memoryContext,
    });
  }

  #finish(p: PreparedResponse, run: Run, body: ResponseBody): Promise<StoredResponse> {
    return finishResponse(this.#deps, p, run.conversation, body);
  }
}
