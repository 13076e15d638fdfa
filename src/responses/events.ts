import type { PassThrough } from 'node:stream';
import { sseWriter } from '../http/index.js';
import type { OutputItem, ResponseBody } from './types.js';

/** One event of a response: its `type`, its `sequence_number`, and its own fields. */
export interface ResponseEvent {
  type: string;
  sequence_number: number;
  [field: string]: unknown;
}

/**
 * Where a response's events go: a Server-Sent-Events body, a WebSocket, the background queue's stored log. A
 * write resolves when the sink can take the next one (backpressure) and throws ClientDisconnectedError once its
 * reader is gone.
 */
export interface EventSink {
  write(event: ResponseEvent): Promise<void> | void;
}

/** The last event of a response by its status. */
export function terminalEventType(status: ResponseBody['status']): string {
  switch (status) {
    case 'failed':
      return 'response.failed';
    case 'incomplete':
      return 'response.incomplete';
    case 'cancelled':
      // OpenAI's name for it (its webhook event); no other event says a response ended this way.
      return 'response.cancelled';
    default:
      return 'response.completed';
  }
}

/** Whether an event is the last of its response. */
export function isTerminalEvent(type: string): boolean {
  return (
    type === 'response.completed' ||
    type === 'response.incomplete' ||
    type === 'response.failed' ||
    type === 'response.cancelled'
  );
}

/**
 * The Responses API's typed events: `{"type", "sequence_number", …}`, numbered in the order written (from 0, or
 * after the events a background response already had), as OpenAI sends them.
 */
export class ResponseEvents {
  readonly #sink: EventSink;
  #sequence: number;

  constructor(sink: EventSink, firstSequence = 0) {
    this.#sink = sink;
    this.#sequence = firstSequence;
  }

  /** The number the next event takes. */
  get next(): number {
    return this.#sequence;
  }

  async send(type: string, fields: Record<string, unknown>): Promise<void> {
    await this.#sink.write({ type, sequence_number: this.#sequence++, ...fields });
  }

  /** `response.created` then `response.in_progress`, with the response as it starts (no output yet). */
  async started(response: ResponseBody): Promise<void> {
    await this.send('response.created', { response });
    await this.send('response.in_progress', { response });
  }

  /** An item that is complete when it appears (a search that ran, a code run): added, its own steps, done. */
  async wholeItem(outputIndex: number, item: OutputItem): Promise<void> {
    const steps: Record<string, string[]> = {
      file_search_call: ['in_progress', 'searching', 'completed'],
      web_search_call: ['in_progress', 'searching', 'completed'],
      code_interpreter_call: ['in_progress', 'interpreting', 'completed'],
      mcp_list_tools: ['in_progress', item.status === 'failed' ? 'failed' : 'completed'],
      mcp_call: ['in_progress', item.status === 'failed' ? 'failed' : 'completed'],
    };
    await this.send('response.output_item.added', {
      output_index: outputIndex,
      item: { ...item, status: 'in_progress' },
    });
    if (item.type === 'code_interpreter_call') {
      await this.send('response.code_interpreter_call_code.done', {
        output_index: outputIndex,
        item_id: item.id,
        code: item.code ?? '',
      });
    }
    if (item.type === 'mcp_call') {
      const args = { output_index: outputIndex, item_id: item.id };
      await this.send('response.mcp_call_arguments.delta', { ...args, delta: item.arguments ?? '' });
      await this.send('response.mcp_call_arguments.done', { ...args, arguments: item.arguments ?? '' });
    }
    for (const step of steps[item.type] ?? []) {
      await this.send(`response.${item.type}.${step}`, { output_index: outputIndex, item_id: item.id });
    }
    await this.send('response.output_item.done', { output_index: outputIndex, item });
  }

  /** The last event, named by the response's status, with the whole response. */
  async finished(response: ResponseBody): Promise<void> {
    await this.send(terminalEventType(response.status), { response });
  }
}

/** Events as a Server-Sent-Events body: `event: <type>` and `data: <json>`, through http/'s one SSE writer. */
export function sseSink(out: PassThrough): EventSink {
  const write = sseWriter(out);
  return { write: (event) => write(JSON.stringify(event), event.type) };
}
