import type { PassThrough } from 'node:stream';
import { type AppError, errorBody } from '../errors/index.js';
import { ClientDisconnectedError } from '../http/handler.js';
import type { Completion, StreamPart } from '../providers/index.js';
import { ToolCallAccumulator } from '../providers/index.js';
import { ChunkEncoder, type ResponseMeta } from './wire.js';

export interface StreamOutcome {
  /** The whole answer, when the stream reached its finish part. */
  completion?: Completion;
  /** The failure that ended the stream after it started (sent as an error event). */
  error?: AppError;
  /** The client left before the end: nothing failed, and there is nobody to tell. */
  clientClosed?: true;
}

function event(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/**
 * Writes parts as Server-Sent Events: `data: <chunk>` per chunk, then `data: [DONE]`; a failure
 * after the start becomes `data: {"status":"error",…}` and ends the stream. Resolves when done.
 */
export async function pipeAsSse(
  first: Exclude<StreamPart, { type: 'error' }>,
  rest: AsyncIterator<StreamPart>,
  meta: ResponseMeta,
  out: PassThrough,
  toAppError: (err: unknown) => AppError,
): Promise<StreamOutcome> {
  const encoder = new ChunkEncoder(meta);
  const calls = new ToolCallAccumulator();
  let text = '';
  const write = async (payload: string) => {
    if (out.destroyed) throw new ClientDisconnectedError();
    if (!out.write(payload)) await new Promise<void>((resolve) => out.once('drain', resolve));
  };
  let part: StreamPart | undefined = first;
  try {
    while (part) {
      if (part.type === 'error') {
        const error = toAppError(part.error);
        await write(event(errorBody(error)));
        return { error };
      }
      if (part.type === 'text-delta') text += part.text;
      if (part.type === 'tool-call-delta') calls.add(part);
      for (const chunk of encoder.encode(part)) await write(event(chunk));
      if (part.type === 'finish') {
        await write(event('[DONE]'));
        return {
          completion: {
            text: text === '' && calls.size > 0 ? null : text,
            toolCalls: calls.toToolCalls(),
            finishReason: part.finishReason,
            usage: part.usage,
          },
        };
      }
      const next = await rest.next();
      part = next.done ? undefined : next.value;
    }
    return {};
  } catch (err) {
    if (err instanceof ClientDisconnectedError) return { clientClosed: true };
    const error = toAppError(err);
    if (!out.destroyed) await write(event(errorBody(error))).catch(() => undefined);
    return { error };
  } finally {
    out.end();
  }
}
