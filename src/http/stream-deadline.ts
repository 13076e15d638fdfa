import type { ServerResponse } from 'node:http';

/**
 * How often, per deadline, a stream's buffer is looked at. The stall is counted from the first look that
 * finds the buffer full, so a stream is cut between 1 and 1¼ deadlines after its client stopped reading,
 * never before; one timer, refreshed, per stream.
 */
const LOOKS_PER_DEADLINE = 4;

/**
 * Cuts a streamed response whose client stopped reading: when its buffers stay full (`writableNeedDrain`,
 * no 'drain') for `timeoutMs`, `onCut` runs, then the connection is reset. Its response closes unfinished,
 * so the request's disconnect signal aborts the work behind it (the upstream request). Reset, not closed:
 * a closed socket would keep the megabytes its client never took in the kernel, retrying for minutes.
 *
 * Backpressure bounds the memory such a client holds; this bounds the time, and frees the connection
 * and the upstream request. A client that reads, however slowly, drains the buffer and is left alone,
 * as is a stream that writes nothing for a while (a slow model): its buffer is not full.
 */
export function cutWhenStalled(res: ServerResponse, timeoutMs: number, onCut: () => void): void {
  let fullSince: number | undefined;
  const drained = () => {
    fullSince = undefined;
  };
  const look = () => {
    if (!res.writableNeedDrain) {
      fullSince = undefined;
    } else {
      const now = performance.now();
      fullSince ??= now;
      if (now - fullSince >= timeoutMs) {
        stop();
        onCut();
        const socket = res.socket;
        if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
        else res.destroy();
        return;
      }
    }
    timer.refresh();
  };
  const timer = setTimeout(look, Math.max(1, Math.floor(timeoutMs / LOOKS_PER_DEADLINE)));
  timer.unref();
  const stop = () => {
    clearTimeout(timer);
    res.off('drain', drained);
  };
  res.on('drain', drained);
  res.once('close', stop);
}
