import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `probe` until it returns a value that `done` accepts, for work the service finishes after the
 * response (usage rows are written behind). Returns the last value either way, so the caller's
 * assertion reports what was actually seen.
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 2000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await sleep(10);
    value = await probe();
  }
  return value;
}
