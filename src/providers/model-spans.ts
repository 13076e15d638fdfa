import { type Attributes, failSpan, inSpan, type Span, SpanKind, startSpan, TRACING } from '../tracing/index.js';
import type { ChatProvider, Completion, FinishReason, GenerationRequest, StreamPart, Usage } from './types.js';

/** What a model span says of the target it calls (router.ts's Target, without importing the router). */
interface Target {
  provider: 'local' | 'openai-compatible';
  model: string;
}

/**
 * One model call's span, by the OpenTelemetry GenAI conventions: `chat {model}`, kind CLIENT, the model asked and
 * answered (the target's), the provider, the request's limits, and at its end the tokens and finish reason. Prompt
 * and answer go in only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. Called only when TRACING.on.
 */
function modelSpan(pvModel: string, target: Target, request: GenerationRequest): Span {
  // An OpenAI-compatible upstream speaks OpenAI's API; the local engine is llama.cpp (node-llama-cpp).
  const provider = target.provider === 'local' ? 'llama_cpp' : 'openai';
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider,
    'gen_ai.system': provider,
    'gen_ai.request.model': target.model,
    'gen_ai.request.max_tokens': request.maxTokens,
    'gen_ai.request.temperature': request.temperature,
    'pvai.model': pvModel,
  };
  if (TRACING.content) attributes['gen_ai.input.messages'] = JSON.stringify(request.messages);
  return startSpan(`chat ${target.model}`, attributes, SpanKind.CLIENT);
}

function endModelSpan(
  span: Span,
  target: Target,
  finishReason: FinishReason,
  usage: Usage,
  text?: string | null,
): void {
  span.setAttribute('gen_ai.response.model', target.model);
  span.setAttribute('gen_ai.usage.input_tokens', usage.promptTokens);
  span.setAttribute('gen_ai.usage.output_tokens', usage.completionTokens);
  span.setAttribute('gen_ai.response.finish_reasons', [finishReason]);
  if (TRACING.content && text != null) {
    const output = [{ role: 'assistant', parts: [{ type: 'text', content: text }], finish_reason: finishReason }];
    span.setAttribute('gen_ai.output.messages', JSON.stringify(output));
  }
  span.end();
}

/** A whole answer from one target, in its model span (active: the upstream call carries its trace). */
export async function tracedGenerate(
  pvModel: string,
  target: Target,
  provider: ChatProvider,
  request: GenerationRequest,
  signal: AbortSignal,
): Promise<Completion> {
  const span = modelSpan(pvModel, target, request);
  let completion: Completion;
  try {
    completion = await inSpan(span, () => provider.generate(request, signal));
  } catch (err) {
    failSpan(span, err);
    span.end();
    throw err;
  }
  endModelSpan(span, target, completion.finishReason, completion.usage, completion.text);
  return completion;
}

/**
 * A streamed answer from one target, in its model span: each part read with the span active, the span ended when
 * the stream ends, fails or is cut (its consumer stopped), with the tokens known by then.
 */
export async function* tracedStream(
  pvModel: string,
  target: Target,
  provider: ChatProvider,
  request: GenerationRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamPart, void, undefined> {
  const span = modelSpan(pvModel, target, request);
  const parts = inSpan(span, () => provider.stream(request, signal)[Symbol.asyncIterator]());
  let finish: Extract<StreamPart, { type: 'finish' }> | undefined;
  let text = TRACING.content ? '' : undefined;
  try {
    for (;;) {
      const next = await inSpan(span, () => parts.next());
      if (next.done) break;
      const part = next.value;
      if (part.type === 'finish') finish = part;
      else if (part.type === 'error') failSpan(span, part.error);
      else if (part.type === 'text-delta' && text !== undefined) text += part.text;
      yield part;
    }
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    await parts.return?.();
    if (finish) endModelSpan(span, target, finish.finishReason, finish.usage, text);
    else span.end();
  }
}
