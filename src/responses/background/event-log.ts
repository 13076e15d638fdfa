import { PassThrough } from 'node:stream';
import { ClientDisconnectedError } from '../../http/index.js';
import { type EventSink, isTerminalEvent, type ResponseEvent, sseSink } from '../events.js';
import type { SqlBackgroundRuns } from './run-store.js';

/** Events a run may make ahead of the database before its model waits for them to be stored. */
const MAX_UNSTORED = 1000;

/**
 * Wakes the followers of a response on this replica as soon as its events are stored (followers on another
 * replica poll the events table).
 */
export class EventHub {
  readonly #waiters = new Map<string, Set<() => void>>();

  notify(id: string): void {
    const waiting = this.#waiters.get(id);
    if (!waiting) return;
    this.#waiters.delete(id);
    for (const wake of waiting) wake();
  }

  /** Resolves at the next notify of `id`, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(id: string, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiting = this.#waiters.get(id) ?? new Set<() => void>();
      this.#waiters.set(id, waiting);
      const wake = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', wake);
        waiting.delete(wake);
        if (waiting.size === 0 && this.#waiters.get(id) === waiting) this.#waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      signal.addEventListener('abort', wake, { once: true });
      waiting.add(wake);
    });
  }
}

/**
 * A run's events into its stored log, numbered after the events already there. Writes never wait for a
 * reader (readers read the table): the events made while one batch is written are the next batch, and the
 * model waits only when the database falls `MAX_UNSTORED` events behind. The run's own `response.created` is
 * left out (the log starts with the queued response's), and the terminal event is held back for `take`, so
 * that it is stored with the run's end, after the response's final row.
 */
export class StoredEventSink implements EventSink {
  readonly #runs: SqlBackgroundRuns;
  readonly #hub: EventHub;
  readonly #id: string;
  #next: number;
  #unstored: ResponseEvent[] = [];
  #writing: Promise<void> = Promise.resolve();
  #scheduled = false;
  #terminal: ResponseEvent | undefined;
  /** The last failure to store a batch (its events stay, for the next batch or the end). */
  failure: unknown;

  constructor(runs: SqlBackgroundRuns, hub: EventHub, id: string, next: number) {
    this.#runs = runs;
    this.#hub = hub;
    this.#id = id;
    this.#next = next;
  }

  /** The number the next event takes. */
  get next(): number {
    return this.#next;
  }

  write(event: ResponseEvent): Promise<void> | undefined {
    if (event.type === 'response.created') return undefined;
    const numbered = { ...event, sequence_number: this.#next++ };
    if (isTerminalEvent(event.type)) {
      this.#terminal = numbered;
      return undefined;
    }
    this.#unstored.push(numbered);
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#writing = this.#writing.then(() => this.#store());
    }
    return this.#unstored.length >= MAX_UNSTORED ? this.#writing : undefined;
  }

  /** Waits for the batch under way, then returns what is left to store, the terminal event last (if made). */
  async take(): Promise<ResponseEvent[]> {
    await this.#writing;
    const left = this.#unstored.splice(0);
    if (this.#terminal) left.push(this.#terminal);
    return left;
  }

  async #store(): Promise<void> {
    this.#scheduled = false;
    const batch = this.#unstored.splice(0);
    if (batch.length === 0) return;
    try {
      await this.#runs.append(this.#id, batch);
      this.#hub.notify(this.#id);
    } catch (err) {
      this.failure = err;
      this.#unstored.unshift(...batch);
    }
  }
}

/** How often a follower looks for events another replica stored (one on this replica is woken at once). */
const FOLLOW_POLL_MS = 200;

/**
 * A background response's stored events after `after`, then the live ones as they are stored, until its
 * terminal event (or its run is done or gone, or `signal` aborts). Sequence numbers only grow: a follower
 * that reconnects with the last number it read gets exactly what it missed.
 */
export async function* follow(
  runs: SqlBackgroundRuns,
  hub: EventHub,
  id: string,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<ResponseEvent> {
  let cursor = after;
  let lastLook = false;
  while (!signal.aborted) {
    const events = await runs.events(id, cursor);
    for (const event of events) {
      yield event;
      cursor = event.sequence_number;
      if (isTerminalEvent(event.type)) return;
    }
    if (events.length > 0) continue;
    // The terminal event is stored with the run's end: a done run whose log is read to its end is over.
    if (lastLook) return;
    const state = await runs.state(id);
    if (state === undefined || state === 'done') lastLook = true;
    else await hub.wait(id, FOLLOW_POLL_MS, signal);
  }
}

/**
 * Events as a Server-Sent-Events body, written as they come; `finished` settles when the body ended. A log
 * that cannot be read ends the body (reported to `onError`): the client resumes from the last number it read.
 */
export function sseOf(
  events: AsyncIterable<ResponseEvent>,
  onError: (err: unknown) => void,
): { stream: PassThrough; finished: Promise<void> } {
  const stream = new PassThrough();
  const sink = sseSink(stream);
  const finished = (async () => {
    try {
      for await (const event of events) await sink.write(event);
    } catch (err) {
      if (!(err instanceof ClientDisconnectedError)) onError(err);
    } finally {
      stream.end();
    }
  })();
  return { stream, finished };
}
