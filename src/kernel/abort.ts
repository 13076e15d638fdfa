/**
 * `work`'s outcome, or a rejection as soon as `signal` aborts, whichever comes first; the listener is removed either
 * way. For work that cannot itself be cancelled (a DNS lookup, a parse in a worker that finishes anyway): the caller
 * stops waiting, the work runs out on its own. The rejection is the signal's reason unless `reason` says otherwise.
 */
export function untilAborted<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  reason: () => unknown = () => signal?.reason,
): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(reason());
    signal.addEventListener('abort', stop, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(err);
      },
    );
  });
}
