import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SlotList } from '../../kernel/index.js';
import { type Completion, ProviderError, type StreamPart } from '../types.js';
import {
  CREDIT_BATCH,
  type FromEngineThread,
  fromWireError,
  fromWirePart,
  type ToEngineThread,
  type WirePart,
} from './engine-thread-protocol.js';
import type { LocalEngineSettings } from './local-engine.js';

// The thread runs engine-thread-worker.ts (or .js once built) as its entry, so that under tests it inherits tsx
// from execArgv (an eval'd entry's imports do not go through tsx's resolver).
const WORKER_MODULE = new URL(`./engine-thread-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** A call's first message (load, stream, generate, close) before the thread numbers it. */
type CallStart =
  Extract<ToEngineThread, { provider: number; call: number }> extends infer M
    ? M extends unknown
      ? Omit<M, 'call'>
      : never
    : never;

/**
 * One call on the engine's thread, as the main thread sees it: the parts that arrived and not yet taken,
 * then its end. `next()` answers the next part, undefined at the end, or throws the call's error.
 */
export class EngineCall {
  readonly #parts: WirePart[] = [];
  #read = 0;
  #taken = 0;
  #waiter: { resolve: (part: StreamPart | undefined) => void; reject: (err: unknown) => void } | undefined;
  #error: Error | undefined;
  #completion: Completion | undefined;
  #ended = false;
  #onEnd: (() => void) | undefined;

  /** The slot it holds among the thread's calls: the number its messages carry. */
  number = -1;

  constructor(private readonly thread: EngineThread) {}

  get ended(): boolean {
    return this.#ended;
  }

  /** A `generate` call's answer, once it ended without an error. */
  get completion(): Completion | undefined {
    return this.#completion;
  }

  next(): Promise<StreamPart | undefined> {
    if (this.#read < this.#parts.length) return Promise.resolve(this.#take());
    if (this.#ended) return this.#error ? Promise.reject(this.#error) : Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** Asks the engine's thread to stop the call; `settled()` resolves once its sequence is back. */
  abort(): void {
    if (!this.#ended) this.thread.post({ t: 'abort', call: this.number });
  }

  /** Resolves once the engine's thread has ended the call (an error, if any, is left to `next()`). */
  settled(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onEnd = resolve;
    });
  }

  receive(message: FromEngineThread): void {
    if (message.t === 'part') {
      const waiter = this.#waiter;
      this.#parts.push(message.part);
      if (waiter) {
        this.#waiter = undefined;
        waiter.resolve(this.#take());
      }
      return;
    }
    this.#completion = message.completion;
    this.end(message.error === undefined ? undefined : fromWireError(message.error));
  }

  end(error: Error | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter && this.#read === this.#parts.length) {
      if (error) waiter.reject(error);
      else waiter.resolve(undefined);
    }
    this.#onEnd?.();
  }

  #take(): StreamPart {
    const part = this.#parts[this.#read] as WirePart;
    this.#parts[this.#read] = undefined as unknown as WirePart; // taken parts are garbage at once
    this.#read += 1;
    if (this.#read === this.#parts.length) {
      this.#parts.length = 0;
      this.#read = 0;
    }
    this.#taken += 1;
    if (this.#taken % CREDIT_BATCH === 0 && !this.#ended) {
      this.thread.post({ t: 'credit', call: this.number, parts: CREDIT_BATCH });
    }
    return fromWirePart(part);
  }
}

/**
 * The local engine's own thread (a worker running `engine-thread-worker.ts`): every local model of the
 * process is loaded and generates there. Why: on the main thread, node-llama-cpp's per-token garbage
 * (~28.5 KB a token) lived in the server's heap, and in a server that had built its contract validators it
 * survived the scavenges (6.8 MB a scavenge); a token then cost 95–115 µs of the event loop against 70–76
 * in a process of its own (measured with bench:chat's local rows), and the model waits for those µs between tokens.
 * Here that garbage lives and dies in the thread's own heap, and the event loop pays a message a streamed
 * token (an answer that is not streamed comes back in one).
 *
 * One thread for the process, never stopped before it exits: llama.cpp's backend is process-wide, and a
 * thread that loaded it frees it for everyone when it exits. It does not keep the process alive while idle.
 */
export class EngineThread {
  readonly #worker: Worker;
  readonly #calls = new SlotList<EngineCall>();
  #nextProvider = 0;
  #alive = true;

  constructor() {
    this.#worker = new Worker(WORKER_MODULE, { workerData: { pvaiEngineThread: true } });
    this.#worker.unref();
    this.#worker.on('message', (message: FromEngineThread) => this.#receive(message));
    this.#worker.on('error', (err: Error) => this.#stopped(err.message));
    this.#worker.on('exit', (code: number) => this.#stopped(`exited with code ${code}`));
  }

  get alive(): boolean {
    return this.#alive;
  }

  /**
   * Hosts a model on the thread; answers its number, the shared [active, queued] the thread keeps, and the shared
   * [reused, evaluated] prompt tokens it counts.
   */
  open(settings: LocalEngineSettings): { provider: number; state: Int32Array; promptTokens: BigInt64Array } {
    const provider = this.#nextProvider++;
    const state = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const promptTokens = new BigInt64Array(new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT));
    this.post({ t: 'open', provider, settings, state, promptTokens });
    return { provider, state, promptTokens };
  }

  start(message: CallStart): EngineCall {
    const call = new EngineCall(this);
    call.number = this.#calls.add(call);
    if (this.#calls.size === 1) this.#worker.ref(); // a call in flight keeps the process alive
    if (this.#alive) this.post({ ...message, call: call.number } as ToEngineThread);
    else this.#finish(call, stoppedError('is not running'));
    return call;
  }

  post(message: ToEngineThread): void {
    if (this.#alive) this.#worker.postMessage(message);
  }

  #receive(message: FromEngineThread): void {
    const call = this.#calls.get(message.call);
    if (!call) return;
    call.receive(message);
    if (message.t === 'end') this.#release(message.call);
  }

  #finish(call: EngineCall, error: Error): void {
    call.end(error);
    this.#release(call.number);
  }

  #release(number: number): void {
    this.#calls.delete(number);
    if (this.#calls.size === 0) this.#worker.unref();
  }

  #stopped(why: string): void {
    if (!this.#alive) return;
    this.#alive = false;
    if (shared === this) shared = undefined; // the next call starts a new thread
    for (const call of [...this.#calls]) this.#finish(call, stoppedError(why));
  }
}

function stoppedError(why: string): ProviderError {
  return new ProviderError('upstream', `the local engine thread ${why}`, { retryable: true });
}

let shared: EngineThread | undefined;

/** The process's local engine thread, started on first use. */
export function engineThread(): EngineThread {
  shared ??= new EngineThread();
  return shared;
}
