import type { PassThrough } from 'node:stream';
import { type AppError, asAppError, errorBody } from '../errors/index.js';
import { ClientDisconnectedError, sseWriter } from '../http/index.js';
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
  const write = sseWriter(out);
  try {
    let finished: StreamOutcome | undefined;
    // Read to the parts' end, not only to the finish: the answer is stored (response cache, memory) as they
    // end, before the stream's end is written.
    for await (const part of parts) {
      if (part.type === 'failed') {
        await write(JSON.stringify(errorBody(part.error)));
        return { error: part.error };
      }
      const chunks = encoder.encode(part);
      if (chunks.length > 0 && !started) {
        started = true;
        onFirstPart();
      }
      for (const chunk of chunks) await write(JSON.stringify(chunk));
      if (part.type === 'finish') finished = { usage: part.usage };
    }
    if (!finished) return {};
    await write('[DONE]');
    return finished;
  } catch (err) {
    if (err instanceof ClientDisconnectedError) return { clientClosed: true };
    const error = asAppError(err);
    if (!out.destroyed) await write(JSON.stringify(errorBody(error))).catch(() => undefined);
    return { error };
  } finally {
    out.end();
  }
}
