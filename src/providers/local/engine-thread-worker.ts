import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { Completion } from '../types.js';
import {
  type FromEngineThread,
  STREAM_WINDOW,
  type ToEngineThread,
  toWireError,
  toWirePart,
} from './engine-thread-protocol.js';
import { InProcessLocalProvider } from './in-process-provider.js';

interface Hosted {
  provider: InProcessLocalProvider;
  /** [active, queued], read by the main thread's `LocalChatProvider.queueState()`. */
  state: Int32Array;
  /** [reused, evaluated] prompt tokens, read by `LocalChatProvider.promptTokens()`. */
  promptTokens: BigInt64Array;
}

/** One stream or answer on this thread: its abort, and how far a stream may run ahead of the main thread. */
class StreamRun {
  readonly controller = new AbortController();
  sent = 0;
  credited = 0;
  #wake: (() => void) | undefined;

  get mayRunAhead(): boolean {
    return this.sent - this.credited < STREAM_WINDOW;
  }

  /** Resolves when the main thread gives credit or aborts. */
  untilCreditOrAbort(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  credit(parts: number): void {
    this.credited += parts;
    this.wake();
  }

  abort(): void {
    this.controller.abort();
    this.wake();
  }

  private wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/**
 * The local engine's thread: hosts an `InProcessLocalProvider` per model and runs the calls the main
 * thread sends (`engine-thread.ts`). Everything node-llama-cpp does per token — sampling settings,
 * detokenising, the stop triggers — is garbage made here, in this thread's heap, and the main thread's
 * event loop gets a message a streamed token (an answer that is not streamed, one message).
 */
export function serveEngineThread(port: MessagePort): void {
  const providers = new Map<number, Hosted>();
  /** Indexed by call number: the main thread numbers calls by the slot they take, so the numbers stay small. */
  const runs: (StreamRun | undefined)[] = [];
  const send = (message: FromEngineThread): void => port.postMessage(message);

  const loaded = async (hosted: Hosted | undefined): Promise<InProcessLocalProvider> => {
    if (!hosted) throw new Error('the local engine thread has no such model (closed)');
    const engine = await hosted.provider.load();
    engine.pool.onChange ??= (active, queued) => {
      Atomics.store(hosted.state, 0, active);
      Atomics.store(hosted.state, 1, queued);
    };
    return hosted.provider;
  };

  /**
   * Runs a stream or an answer that the main thread may abort, and ends it with one `end`: with the answer
   * (`generate`), or with `aborted` when it stopped because it was aborted.
   */
  const abortable = async (call: number, work: (run: StreamRun) => Promise<Completion | undefined>): Promise<void> => {
    const run = new StreamRun();
    runs[call] = run;
    try {
      const completion = await work(run);
      send({ t: 'end', call, aborted: run.controller.signal.aborted, ...(completion ? { completion } : {}) });
    } catch (err) {
      send({ t: 'end', call, error: toWireError(err), aborted: run.controller.signal.aborted });
    } finally {
      runs[call] = undefined;
    }
  };

  const stream = async (message: Extract<ToEngineThread, { t: 'stream' }>, run: StreamRun): Promise<undefined> => {
    const provider = await loaded(providers.get(message.provider));
    for await (const part of provider.stream(message.req, run.controller.signal)) {
      send({ t: 'part', call: message.call, part: toWirePart(part) });
      run.sent += 1;
      if (!run.mayRunAhead) await run.untilCreditOrAbort();
      if (run.controller.signal.aborted) break; // leaving the loop gives the sequence back
    }
    return undefined;
  };

  // A whole answer in one message: a caller that does not stream pays no message a token.
  const generate = async (message: Extract<ToEngineThread, { t: 'generate' }>, run: StreamRun) => {
    const provider = await loaded(providers.get(message.provider));
    return provider.generate(message.req, run.controller.signal);
  };

  const settle = async (call: number, work: () => Promise<unknown>): Promise<void> => {
    try {
      await work();
      send({ t: 'end', call });
    } catch (err) {
      send({ t: 'end', call, error: toWireError(err) });
    }
  };

  port.on('message', (message: ToEngineThread) => {
    switch (message.t) {
      case 'open': {
        const provider = new InProcessLocalProvider(message.settings);
        const counts = message.promptTokens;
        provider.onPrompt = (reused, evaluated) => {
          Atomics.add(counts, 0, BigInt(reused));
          Atomics.add(counts, 1, BigInt(evaluated));
        };
        providers.set(message.provider, { provider, state: message.state, promptTokens: counts });
        return;
      }
      case 'load':
        void settle(message.call, () => loaded(providers.get(message.provider)));
        return;
      case 'stream':
        void abortable(message.call, (run) => stream(message, run));
        return;
      case 'generate':
        void abortable(message.call, (run) => generate(message, run));
        return;
      case 'close': {
        const hosted = providers.get(message.provider);
        providers.delete(message.provider);
        // Its queue state is left as it is: a closed LocalChatProvider answers zeros without reading it.
        void settle(message.call, async () => hosted?.provider.close());
        return;
      }
      case 'abort':
        runs[message.call]?.abort();
        return;
      case 'credit':
        runs[message.call]?.credit(message.parts);
        return;
    }
  });
}

// Started as the entry of the thread `engine-thread.ts` makes (importing this module elsewhere starts nothing).
if (parentPort && (workerData as { pvaiEngineThread?: boolean } | null)?.pvaiEngineThread)
  serveEngineThread(parentPort);
