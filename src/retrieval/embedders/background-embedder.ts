import type { ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { forkModule, siblingModule } from '../../kernel/index.js';
import type { Embedder } from '../types.js';
import type { FromBackgroundEmbedder, ToBackgroundEmbedder } from './background-embedder-main.js';
import type { LocalEmbedderOptions } from './local-embedder.js';

const ENTRY = siblingModule(import.meta.url, 'background-embedder-main');

/** How much less CPU the background embedder asks for than the server (a nice value; 19 is the least). */
const BACKGROUND_NICENESS = 10;

interface Pending {
  resolve(vectors: Array<Float32Array | undefined>): void;
  reject(err: Error): void;
  onTokens: ((tokens: number) => void) | undefined;
}

/**
 * The local embedding model in a process of its own at a lower CPU priority, for work nobody waits on: the facts
 * extracted from each chat turn behind its answer. On a small machine that work otherwise takes the cores a local
 * model is generating the next answers on (measured in docs/benchmarks.md, bench:local with memory on and off);
 * at nice 10 the kernel gives it what generation leaves, and all of it when the machine is idle. Its vectors are
 * the same model's as the server's embedder (same id), so they are stored and compared alike.
 *
 * Started on first use, and until its model is loaded (seconds, on a busy machine) calls go to the server's own
 * embedder, so the first turns' facts are not held up by it. It does not keep the server alive while idle, and
 * exits with it.
 */
export class BackgroundEmbedder implements Embedder {
  readonly id: string;
  readonly #options: LocalEmbedderOptions;
  readonly #fallback: Embedder;
  #child: ChildProcess | undefined;
  /** Resolves when the child has its model loaded; undefined while none is starting. */
  #ready: Promise<void> | undefined;
  #loaded = false;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #closed = false;

  /** `fallback`: the server's embedder of the same model, which answers while this one starts. */
  constructor(fallback: Embedder, options: LocalEmbedderOptions) {
    this.id = fallback.id;
    this.#fallback = fallback;
    this.#options = options;
  }

  /** Starts the process if it is not running; resolves once its model is loaded. */
  ready(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the background embedder is closed'));
    this.#start();
    return this.#ready as Promise<void>;
  }

  /** The process's id while it runs (tests read its priority). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  dimension(): Promise<number> {
    return this.#fallback.dimension();
  }

  embed(
    texts: readonly string[],
    signal?: AbortSignal,
    onTokens?: (tokens: number) => void,
  ): Promise<Array<Float32Array | undefined>> {
    if (this.#closed) return Promise.reject(new Error('the background embedder is closed'));
    signal?.throwIfAborted();
    const child = this.#start();
    if (!this.#loaded) return this.#fallback.embed(texts, signal, onTokens);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const abort = (): void => {
        this.#send({ t: 'abort', id });
        this.#settle(id)?.reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      const done = (): void => signal?.removeEventListener('abort', abort);
      this.#pending.set(id, {
        resolve: (vectors) => {
          done();
          resolve(vectors);
        },
        reject: (err) => {
          done();
          reject(err);
        },
        onTokens,
      });
      if (this.#pending.size === 1) child.channel?.ref(); // work in flight keeps the server alive
      this.#send({ t: 'embed', id, texts: [...texts] });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#child;
    this.#child = undefined;
    this.#failAll(new Error('the background embedder is closed'));
    if (child?.connected) child.disconnect();
  }

  #start(): ChildProcess {
    if (this.#child) return this.#child;
    const child = forkModule(ENTRY, { PVAI_BACKGROUND_EMBEDDER: '1' });
    this.#child = child;
    this.#loaded = false;
    const started = Promise.withResolvers<void>();
    this.#ready = started.promise;
    this.#ready.catch(() => undefined); // a start nobody waits on may fail unobserved
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, BACKGROUND_NICENESS);
      } catch {
        // A platform that refuses it runs the embedder at the server's priority: slower to share, still correct.
      }
    }
    child.on('message', (message: FromBackgroundEmbedder) => {
      if (message.t !== 'ready') return this.#receive(message);
      if (this.#child === child) this.#loaded = true;
      started.resolve();
    });
    const stopped = (why: string) => () => {
      const error = new Error(`the background embedder ${why}`);
      started.reject(error);
      // A process already replaced (or closed) has no calls left: those pending are its successor's.
      if (this.#child !== child) return;
      this.#child = undefined; // the next call starts another (and is answered by the fallback meanwhile)
      this.#loaded = false;
      this.#failAll(error);
    };
    child.on('error', (err) => stopped(err.message)());
    child.on('exit', (code, signal) => stopped(signal ? `was killed by ${signal}` : `exited with code ${code}`)());
    child.unref();
    child.channel?.unref();
    this.#send({ t: 'open', options: this.#options });
    return child;
  }

  #receive(message: Exclude<FromBackgroundEmbedder, { t: 'ready' }>): void {
    const pending = this.#settle(message.id);
    if (!pending) return;
    if (message.t === 'vectors') {
      pending.onTokens?.(message.tokens);
      pending.resolve(message.vectors);
    } else {
      const error = new Error(message.message);
      error.name = message.name;
      pending.reject(error);
    }
  }

  /** Takes a call off the pending ones; an idle channel stops holding the server open. */
  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#child?.channel?.unref();
    return pending;
  }

  #failAll(error: Error): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(error);
  }

  #send(message: ToBackgroundEmbedder): void {
    if (this.#child?.connected) this.#child.send(message);
  }
}
