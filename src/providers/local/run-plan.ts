import { type LlamaContextSequence, LlamaText, type Token } from 'node-llama-cpp';
import { newToolCallId } from '../completion-collector.js';
import type { FinishReason, GenerationRequest, StreamPart, ToolDefinition } from '../types.js';
import { jsonSchemaToGbnf } from './json-schema-to-gbnf.js';
import type { LocalEngine } from './local-engine.js';
import { callParamsPrefixTokens, type RequestPlan } from './request-plan.js';
import { type SamplingSettings, sampleTokens } from './sample-tokens.js';
import { StopSequenceMatcher, TokenTextDecoder } from './text-stream.js';

interface RunContext {
  engine: LocalEngine;
  sequence: LlamaContextSequence;
  req: GenerationRequest;
  signal: AbortSignal;
  /** Told of each prompt put in the context: its tokens reused from the sequence's cache, and those evaluated. */
  onPrompt?: ((reused: number, evaluated: number) => void) | undefined;
}

/**
 * Generates the answer for a prepared plan on a leased sequence.
 *
 * Token accounting: `promptTokens` counts every token fed to the model (the rendered chat plus any
 * tokens we force, like a chosen tool name or the wrapper's call syntax); `completionTokens` counts
 * every sampled token, stop-sequence text included, end-of-generation token excluded.
 */
export function runPlan(ctx: RunContext, plan: RequestPlan): AsyncGenerator<StreamPart> {
  return plan.mode === 'text' ? runText(ctx, plan) : runToolCall(ctx, plan);
}

function samplingOf(req: GenerationRequest): SamplingSettings {
  return {
    temperature: req.temperature,
    ...(req.topP !== undefined ? { topP: req.topP } : {}),
    ...(req.seed !== undefined ? { seed: req.seed } : {}),
    ...(req.presencePenalty !== undefined ? { presencePenalty: req.presencePenalty } : {}),
    ...(req.frequencyPenalty !== undefined ? { frequencyPenalty: req.frequencyPenalty } : {}),
  };
}

/** Sampled tokens allowed: the request's budget, cut to what the context window still holds. */
function budget(ctx: RunContext, contextTokens: number, alreadySampled = 0): number {
  return Math.max(0, Math.min(ctx.req.maxTokens - alreadySampled, ctx.engine.contextSize - contextTokens));
}

async function* runText(ctx: RunContext, plan: Extract<RequestPlan, { mode: 'text' }>): AsyncGenerator<StreamPart> {
  const { engine, sequence, req, signal } = ctx;
  const maxTokens = budget(ctx, plan.promptTokens.length);
  const decoder = new TokenTextDecoder(engine.model);
  const matcher = new StopSequenceMatcher([...plan.stops.texts, ...(req.stop ?? [])]);
  let completionTokens = 0;
  let stoppedEarly = false;
  let rawText = '';

  for await (const token of sampleTokens({
    sequence,
    contextTokens: plan.promptTokens,
    maxTokens,
    sampling: samplingOf(req),
    stopTokens: plan.stops.tokens,
    signal,
    onPrompt: ctx.onPrompt,
    ...(plan.grammar ? { grammar: plan.grammar } : {}),
  })) {
    completionTokens++;
    const piece = decoder.push(token);
    if (piece === '') continue;
    const { release, stopped } = matcher.push(piece);
    if (release !== '') yield { type: 'text-delta', text: release };
    if (stopped) {
      stoppedEarly = true;
      break;
    }
    // A JSON-constrained answer is done once it parses; the grammar would only allow padding after it.
    rawText += piece;
    if (plan.grammar && isCompleteJson(rawText)) {
      stoppedEarly = true;
      break;
    }
  }
  // Release held-back text: an incomplete character, or a partial stop string that never completed.
  let tail = '';
  if (!stoppedEarly) {
    const { release, stopped } = matcher.push(decoder.flush());
    tail = stopped ? release : release + matcher.flush();
    stoppedEarly = stopped;
  } else {
    tail = matcher.flush(); // empty after a stop sequence; the JSON's last characters otherwise
  }
  if (tail !== '') yield { type: 'text-delta', text: tail };
  const finishReason: FinishReason = !stoppedEarly && completionTokens >= maxTokens ? 'length' : 'stop';
  yield { type: 'finish', finishReason, usage: { promptTokens: plan.promptTokens.length, completionTokens } };
}

/**
 * A tool call in two constrained steps, in the chat wrapper's own call syntax:
 * prompt + call prefix → tool name (forced, or sampled under a grammar of the allowed names) →
 * params prefix → arguments (sampled under a grammar built from that tool's JSON schema).
 */
async function* runToolCall(
  ctx: RunContext,
  plan: Extract<RequestPlan, { mode: 'tool-call' }>,
): AsyncGenerator<StreamPart> {
  const { engine, sequence, req, signal } = ctx;
  const tokenizer = engine.model.tokenizer;
  const contextTokens: Token[] = [...plan.promptTokens];
  let promptTokens = plan.promptTokens.length;
  let completionTokens = 0;
  const finish = (finishReason: FinishReason): StreamPart => ({
    type: 'finish',
    finishReason,
    usage: { promptTokens, completionTokens },
  });

  let tool: ToolDefinition | undefined;
  const [onlyTool] = plan.tools;
  if (plan.tools.length === 1 && onlyTool) {
    tool = onlyTool;
    const nameTokens = LlamaText(tool.function.name).tokenize(tokenizer, 'trimLeadingSpace');
    contextTokens.push(...nameTokens);
    promptTokens += nameTokens.length;
  } else {
    const names = plan.tools.map((candidate) => candidate.function.name);
    const decoder = new TokenTextDecoder(engine.model);
    let name = '';
    for await (const token of sampleTokens({
      sequence,
      contextTokens,
      maxTokens: budget(ctx, contextTokens.length),
      sampling: samplingOf(req),
      grammar: await engine.grammarForChoices(names),
      signal,
      onPrompt: ctx.onPrompt,
    })) {
      completionTokens++;
      contextTokens.push(token);
      name += decoder.push(token);
      // Stop as soon as the name is unambiguous (not also the start of a longer allowed name).
      if (names.includes(name) && !names.some((other) => other !== name && other.startsWith(name))) break;
    }
    name += decoder.flush();
    tool = plan.tools.find((candidate) => candidate.function.name === name);
    if (!tool) {
      yield finish('length'); // the budget ran out before a name was complete
      return;
    }
  }

  const id = newToolCallId();
  yield { type: 'tool-call-delta', index: 0, id, name: tool.function.name, argumentsDelta: '' };

  if (tool.function.parameters === undefined) {
    // OpenAI's convention for a tool without parameters.
    yield { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' };
    yield finish('tool_calls');
    return;
  }

  const paramsPrefix = callParamsPrefixTokens(engine, tool.function.name);
  contextTokens.push(...paramsPrefix);
  promptTokens += paramsPrefix.length;
  const maxTokens = budget(ctx, contextTokens.length, completionTokens);
  const grammar = await engine.grammarForSchema(jsonSchemaToGbnf(tool.function.parameters));
  const decoder = new TokenTextDecoder(engine.model);
  let argumentsText = '';
  let argumentTokens = 0;
  for await (const token of sampleTokens({
    sequence,
    contextTokens,
    maxTokens,
    sampling: samplingOf(req),
    grammar,
    signal,
  })) {
    completionTokens++;
    argumentTokens++;
    const piece = decoder.push(token);
    if (piece === '') continue;
    argumentsText += piece;
    yield { type: 'tool-call-delta', index: 0, argumentsDelta: piece };
    if (isCompleteJson(argumentsText)) {
      yield finish('tool_calls');
      return;
    }
  }
  const tail = decoder.flush();
  if (tail !== '') {
    argumentsText += tail;
    yield { type: 'tool-call-delta', index: 0, argumentsDelta: tail };
  }
  yield finish(isCompleteJson(argumentsText) ? 'tool_calls' : argumentTokens >= maxTokens ? 'length' : 'stop');
}

/** True when `text` is one whole JSON object or array (a grammar-bound answer has nothing to add after it). */
function isCompleteJson(text: string): boolean {
  const trimmed = text.trimEnd();
  if (!trimmed.endsWith('}') && !trimmed.endsWith(']')) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}
