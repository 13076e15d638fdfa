import type { AnswerPart, Citation } from '../chat/index.js';
import type { AppError } from '../errors/index.js';
import type { FinishReason, ToolCall, Usage } from '../providers/index.js';
import { CODE_TOOL_NAME } from './code-interpreter.js';
import type { ResponseEvents } from './events.js';
import { newId } from './input.js';
import { functionCallItem, messageItem } from './output.js';
import type { OutputItem } from './types.js';

/** One model call's answer: its text, its tool calls (each with the output item it is, unless pvai runs it). */
export interface RoundAnswer {
  text: string | null;
  /** `index`: the output index a streamed item took as it opened. */
  calls: Array<{ call: ToolCall; item?: OutputItem; index?: number }>;
  message?: { item: OutputItem; index?: number };
  finishReason: FinishReason;
  usage: Usage;
}

export type RoundOutcome = { answer: RoundAnswer } | { failed: AppError };

/** The message a round is writing, as far as it got: what a cancel keeps of it. */
export interface RoundProgress {
  message?: { id: string; index: number };
  text: string | null;
}

interface OpenCall {
  call: ToolCall;
  /** pvai runs it (code, an MCP server's tool): shown as its own item once it ran, not as a function call. */
  code: boolean;
  itemId: string;
  outputIndex: number;
}

/**
 * Relays one streamed model call as response events: the message item opens at its first text, each
 * function call at its first fragment (a call `hosted` says pvai runs, code or an MCP server's tool, is shown as
 * its own item once it ran, not as a function call); at the finish every open item is closed with its final text,
 * arguments and annotations.
 */
export async function streamRound(
  parts: AsyncGenerator<AnswerPart, void, undefined>,
  events: ResponseEvents,
  citations: readonly Citation[],
  nextIndex: () => number,
  progress: RoundProgress = { text: null },
  hosted: (name: string) => boolean = (name) => name === CODE_TOOL_NAME,
): Promise<RoundOutcome> {
  let text: string | null = null;
  let message: { id: string; index: number } | undefined;
  const calls = new Map<number, OpenCall>();
  let done: RoundAnswer | undefined;
  for await (const part of parts) {
    // Nothing follows the finish; the parts are read to their end all the same, as that is when the chat
    // pipeline stores the answer (response cache, memory): leaving the loop at the finish would skip it.
    if (done) continue;
    if (part.type === 'failed') return { failed: part.error };
    if (part.type === 'text-delta') {
      if (!message) {
        message = { id: newId('msg'), index: nextIndex() };
        progress.message = message;
        await events.send('response.output_item.added', {
          output_index: message.index,
          item: { id: message.id, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
        });
        await events.send('response.content_part.added', {
          item_id: message.id,
          output_index: message.index,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        });
      }
      text = (text ?? '') + part.text;
      progress.text = text;
      await events.send('response.output_text.delta', {
        item_id: message.id,
        output_index: message.index,
        content_index: 0,
        delta: part.text,
        logprobs: [],
      });
      continue;
    }
    if (part.type === 'tool-call-delta') {
      let open = calls.get(part.index);
      if (!open) {
        const name = part.name ?? '';
        const call: ToolCall = { id: part.id ?? newId('call'), type: 'function', function: { name, arguments: '' } };
        const code = hosted(name);
        open = { call, code, itemId: newId(code ? 'ci' : 'fc'), outputIndex: code ? -1 : nextIndex() };
        calls.set(part.index, open);
        if (!code) {
          await events.send('response.output_item.added', {
            output_index: open.outputIndex,
            item: functionCallItem(open.itemId, call, 'in_progress'),
          });
        }
      }
      open.call.function.arguments += part.argumentsDelta;
      if (!open.code && part.argumentsDelta) {
        await events.send('response.function_call_arguments.delta', {
          item_id: open.itemId,
          output_index: open.outputIndex,
          delta: part.argumentsDelta,
        });
      }
      continue;
    }
    // The finish: close what is open, in the order it opened.
    const status = part.finishReason === 'length' ? 'incomplete' : 'completed';
    const finished: RoundAnswer = { text, calls: [], finishReason: part.finishReason, usage: part.usage };
    if (message && text !== null) {
      const item = messageItem(message.id, text, citations, status);
      const [content] = item.content ?? [];
      await events.send('response.output_text.done', {
        item_id: message.id,
        output_index: message.index,
        content_index: 0,
        text,
        logprobs: [],
      });
      for (const [i, annotation] of (content?.annotations ?? []).entries()) {
        await events.send('response.output_text.annotation.added', {
          item_id: message.id,
          output_index: message.index,
          content_index: 0,
          annotation_index: i,
          annotation,
        });
      }
      await events.send('response.content_part.done', {
        item_id: message.id,
        output_index: message.index,
        content_index: 0,
        part: content,
      });
      await events.send('response.output_item.done', { output_index: message.index, item });
      finished.message = { item, index: message.index };
    }
    for (const open of calls.values()) {
      if (open.code) {
        finished.calls.push({ call: open.call });
        continue;
      }
      const item = functionCallItem(open.itemId, open.call);
      await events.send('response.function_call_arguments.done', {
        item_id: open.itemId,
        output_index: open.outputIndex,
        name: open.call.function.name,
        arguments: open.call.function.arguments,
      });
      await events.send('response.output_item.done', { output_index: open.outputIndex, item });
      finished.calls.push({ call: open.call, item, index: open.outputIndex });
    }
    done = finished;
  }
  if (!done) throw new Error('the answer ended without a finish part');
  return { answer: done };
}
