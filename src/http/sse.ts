import type { Writable } from 'node:stream';
import { ClientDisconnectedError } from './call.js';

/** Writes one Server-Sent Event (`event: <name>` when named, then `data: <data>`), resolving when more may follow. */
export type SseWrite = (data: string, event?: string) => Promise<void>;

/**
 * The one writer of Server-Sent Events over a streamed body (chat completions, Responses API events). Each event
 * is one `data:` line (`data` holds no line break: JSON or `[DONE]`). Backpressure: a full buffer waits for
 * 'drain'; a write after the client left throws ClientDisconnectedError.
 */
export function sseWriter(out: Writable): SseWrite {
  return async (data, event) => {
    if (out.destroyed) throw new ClientDisconnectedError();
    const payload = event === undefined ? `data: ${data}\n\n` : `event: ${event}\ndata: ${data}\n\n`;
    if (!out.write(payload)) await drainedOrClosed(out);
  };
}

/**
 * A full buffer waits for 'drain'; a connection closed meanwhile (the client left, or the server closed it at
 * the end of a stop) emits 'close' instead, and the next write sees the stream destroyed.
 */
function drainedOrClosed(out: Writable): Promise<void> {
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
