import type { PassThrough } from 'node:stream';
import { ClientDisconnectedError } from '../http/index.js';
import type { OutputItem, ResponseBody } from './types.js';

/**
 * The Responses API's typed Server-Sent Events: `event: <type>` and `data: {"type", "sequence_number", …}`,
 * numbered from 0 in the order written, as OpenAI sends them. The writer waits while the client's buffer is
 * full and throws ClientDisconnectedError once the client is gone.
 */
export class ResponseEvents {
  readonly #out: PassThrough;
  #sequence = 0;

  constructor(out: PassThrough) {
    this.#out = out;
  }

  async send(type: string, fields: Record<string, unknown>): Promise<void> {
    if (this.#out.destroyed) throw new ClientDisconnectedError();
    const data = JSON.stringify({ type, sequence_number: this.#sequence++, ...fields });
    if (!this.#out.write(`event: ${type}\ndata: ${data}\n\n`)) await drainedOrClosed(this.#out);
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
    for (const step of steps[item.type] ?? []) {
      await this.send(`response.${item.type}.${step}`, { output_index: outputIndex, item_id: item.id });
    }
    await this.send('response.output_item.done', { output_index: outputIndex, item });
  }

  /** The last event: `response.completed` (or `response.incomplete`, or `response.failed`) with the whole response. */
  async finished(response: ResponseBody): Promise<void> {
    const type =
      response.status === 'failed'
        ? 'response.failed'
        : response.status === 'incomplete'
          ? 'response.incomplete'
          : 'response.completed';
    await this.send(type, { response });
  }
}

/** A full buffer waits for 'drain'; a connection closed meanwhile emits 'close' instead. */
function drainedOrClosed(out: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      resolve();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}
