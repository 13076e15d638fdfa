import type { PassThrough } from 'node:stream';
import { type AppError, asAppError, errorBody } from '../errors/index.js';
import { ClientDisconnectedError } from '../http/index.js';
import type { AnswerPart } from './chat-service.js';
import { ChunkEncoder, type ResponseMeta } from './wire.js';

export interface StreamOutcome {
  /** Token counts from the finish part, when the stream reached it. */
  usage?: { promptTokens: number; completionTokens: number };
  /** The failure that ended the stream after it started (sent as an error event). */
  error?: AppError;
  /** The client left before the end: nothing failed, and there is nobody to tell. */
  clientClosed?: true;
}

function event(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/**
 * Writes an answer's parts as Server-Sent Events: `data: <chunk>` per chunk, then `data: [DONE]`; a
 * failure after the start becomes `data: {"status":"error",…}` and ends the stream. Resolves when done.
 */
export async function pipeAsSse(
  parts: AsyncGenerator<AnswerPart, void, undefined>,
  meta: ResponseMeta,
  out: PassThrough,
  options: {
    /** `stream_options.include_usage`: end with the usage chunk (empty `choices`), as OpenAI does only then. */
    includeUsage?: boolean;
    /** Called once, when the first part that carries the answer is written (time to first token). */
    onFirstPart?: () => void;
  } = {},
): Promise<StreamOutcome> {
  const encoder = new ChunkEncoder(meta, { includeUsage: options.includeUsage === true });
  const onFirstPart = options.onFirstPart ?? (() => undefined);
  let started = false;
  const write = async (payload: string) => {
    if (out.destroyed) throw new ClientDisconnectedError();
    if (!out.write(payload)) await drainedOrClosed(out);
  };
  try {
    let finished: StreamOutcome | undefined;
    // Read to the parts' end, not only to the finish: the answer is stored (response cache, memory) as they
    // end, before the stream's end is written.
    for await (const part of parts) {
      if (part.type === 'failed') {
        await write(event(errorBody(part.error)));
        return { error: part.error };
      }
      const chunks = encoder.encode(part);
      if (chunks.length > 0 && !started) {
        started = true;
        onFirstPart();
      }
      for (const chunk of chunks) await write(event(chunk));
      if (part.type === 'finish') finished = { usage: part.usage };
    }
    if (!finished) return {};
    await write(event('[DONE]'));
    return finished;
  } catch (err) {
    if (err instanceof ClientDisconnectedError) return { clientClosed: true };
    const error = asAppError(err);
    if (!out.destroyed) await write(event(errorBody(error))).catch(() => undefined);
    return { error };
  } finally {
    out.end();
  }
}

/**
 * A full buffer waits for 'drain'; a connection closed meanwhile (the client left, or the server closed
 * it at the end of a stop) emits 'close' instead, and the next write sees the stream destroyed.
 */
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
