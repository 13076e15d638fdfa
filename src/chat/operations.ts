import { PassThrough } from 'node:stream';
import { type Call, type Operations, type Reply, requiredEndUserOf, requirePrincipal } from '../http/index.js';
import { AnswerText, conversationText } from '../logs/index.js';
import { checkKeyModel, type TierPolicy } from '../tiers/index.js';
import type { Answer, ChatService, StreamedAnswer } from './chat-service.js';
import { checkToolChoice, missingEndUser, normalizeChatRequest } from './request.js';
import { pipeAsSse } from './sse.js';
import { completionBody } from './wire.js';

function answerHeaders(answer: Answer | StreamedAnswer, call: Call): Record<string, string> {
  call.usage.credits = answer.credits;
  call.usage.cached = answer.cache === 'HIT';
  return { 'X-Cache': answer.cache, 'X-Credits-Charged': String(answer.credits) };
}

function noteTokens(
  call: Call,
  answer: Answer | StreamedAnswer,
  usage: { promptTokens: number; completionTokens: number },
) {
  // A cache hit processed no tokens; its body still reports the original usage.
  if (answer.cache === 'HIT') return;
  call.usage.promptTokens = usage.promptTokens;
  call.usage.completionTokens = usage.completionTokens;
}

/** The parts as they are, their text also gathered for the request log (an account with `log_content` on). */
async function* gathering(parts: StreamedAnswer['parts'], into: AnswerText): StreamedAnswer['parts'] {
  for await (const part of parts) {
    if (part.type === 'text-delta') into.add(part.text);
    yield part;
  }
}

function streamReply(answer: StreamedAnswer, call: Call, includeUsage: boolean): Reply<'createChatCompletion'> {
  const out = new PassThrough();
  const content = call.usage.content;
  const said = content ? new AnswerText() : undefined;
  const parts = said ? gathering(answer.parts, said) : answer.parts;
  const firstPart = () => {
    call.usage.firstTokenAt = performance.now();
  };
  const finished = pipeAsSse(parts, answer.meta, out, { includeUsage, onFirstPart: firstPart }).then((outcome) => {
    if (content && said) content.output = said.text();
    if (outcome.clientClosed) call.usage.clientClosed = true;
    if (outcome.error) {
      call.usage.failedStatus = outcome.error.status;
      call.usage.errorCode = outcome.error.code;
    }
    if (outcome.usage) noteTokens(call, answer, outcome.usage);
    if (outcome.error) call.log.warn({ code: outcome.error.code }, 'stream ended with an error');
  });
  return {
    status: 200,
    type: 'text/event-stream',
    headers: { ...answerHeaders(answer, call), 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
    stream: out,
    finished,
  };
}

/** POST /z1/chat/completions: the tier's rules, then the chat service; this only renders JSON or SSE. */
export function chatOperations(deps: { chat: ChatService; tiers: TierPolicy }): Operations<'createChatCompletion'> {
  return {
    createChatCompletion: async ({ body }, call) => {
      const { account } = requirePrincipal(call);
      const named = body.user_id ?? body.user;
      const field = body.user_id === undefined && body.user !== undefined ? 'user' : 'user_id';
      // An alias (`gpt-4o-mini`) is its PV model from here on: rules, credits, routing and the answer's `model`.
      const model = deps.tiers.names.chat(body.model);
      const endUser = requiredEndUserOf(requirePrincipal(call), named, missingEndUser, field);
      const request = normalizeChatRequest(body, { model, endUser }, { images: deps.chat.readsImages(model) });
      // A request naming no temperature is answered at its route's (docs/routing.md), in its cache key too. Set on
      // the request normalizeChatRequest just made: no copy on the hot path.
      request.temperature ??= deps.chat.temperatureFor(request.model);
      call.usage.userId = request.user_id;
      checkToolChoice(request);
      deps.tiers.checkModel(account, request.model);
      const principal = requirePrincipal(call);
      checkKeyModel(principal.key, request.model);
      deps.tiers.checkRagK(account, request.rag_k);
      call.usage.model = request.model;
      // The text is kept only for an account that asked (off by default): nothing is gathered otherwise.
      if (account.logContent) call.usage.content = { input: conversationText(body.messages), output: null };
      if (request.stream) {
        const answer = await deps.chat.stream(principal, request, call.disconnectSignal());
        return streamReply(answer, call, request.stream_options?.include_usage === true);
      }
      const answer = await deps.chat.complete(principal, request, call.disconnectSignal());
      // Without a stream the first token reaches the client with the whole answer.
      call.usage.firstTokenAt = performance.now();
      noteTokens(call, answer, answer.completion.usage);
      if (call.usage.content) call.usage.content.output = answer.completion.text;
      return {
        status: 200,
        headers: answerHeaders(answer, call),
        body: completionBody(answer.meta, answer.completion),
      };
    },
  };
}
