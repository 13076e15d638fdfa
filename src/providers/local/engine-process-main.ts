import { serveParent } from '../../kernel/index.js';
import type { Completion } from '../types.js';
import { type FromEngine, STREAM_WINDOW, type ToEngine, toWireError, toWirePart } from './engine-protocol.js';
import { InProcessLocalProvider } from './in-process-provider.js';

/** One stream or answer in this process: its abort, and how far a stream may run ahead of the server. */
class StreamRun {
  readonly controller = new AbortController();
  sent = 0;
  credited = 0;
  #wake: (() => void) | undefined;

  get mayRunAhead(): boolean {
    return this.sent - this.credited < STREAM_WINDOW;
  }

  /** Resolves when the server gives credit or aborts. */
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
 * The local engine's process (`engine-process.ts`): hosts one model in an `InProcessLocalProvider` and runs the
 * calls the server sends. Everything node-llama-cpp does per token (sampling settings, detokenising, the stop
 * triggers) is garbage made here, in this process's heap; the server gets a message a streamed token (an answer
 * that is not streamed, one message).
 */
function serveEngine(send: (message: FromEngine) => void): (message: ToEngine) => void {
  let hosted: InProcessLocalProvider | undefined;
  /** Indexed by call number: the server numbers calls by the slot they take, so the numbers stay small. */
  const runs: (StreamRun | undefined)[] = [];

  const loaded = async (): Promise<InProcessLocalProvider> => {
    if (!hosted) throw new Error('the local engine has no model (closed)');
    const engine = await hosted.load();
    // Sent before the call's first part and before its end, so the server's view is never behind its calls.
    engine.pool.onChange ??= (active, queued) => send({ t: 'queue', active, queued });
    return hosted;
  };

  /**
   * Runs a stream or an answer that the server may abort, and ends it with one `end`: with the answer
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

  const stream = async (message: Extract<ToEngine, { t: 'stream' }>, run: StreamRun): Promise<undefined> => {
    const provider = await loaded();
    for await (const part of provider.stream(message.req, run.controller.signal)) {
      send({ t: 'part', call: message.call, part: toWirePart(part) });
      run.sent += 1;
      if (!run.mayRunAhead) await run.untilCreditOrAbort();
      if (run.controller.signal.aborted) break; // leaving the loop gives the sequence back
    }
    return undefined;
  };

  // A whole answer in one message: a caller that does not stream pays no message a token.
  const generate = async (message: Extract<ToEngine, { t: 'generate' }>, run: StreamRun) => {
    const provider = await loaded();
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

  return (message) => {
    switch (message.t) {
      case 'open':
        hosted = new InProcessLocalProvider(message.settings);
        hosted.onPrompt = (reused, evaluated) => send({ t: 'prompt', reused, evaluated });
        return;
      case 'load':
        void settle(message.call, () => loaded());
        return;
      case 'stream':
        void abortable(message.call, (run) => stream(message, run));
        return;
      case 'generate':
        void abortable(message.call, (run) => generate(message, run));
        return;
      case 'close': {
        const closing = hosted;
        hosted = undefined;
        void settle(message.call, async () => closing?.close());
        return;
      }
      case 'abort':
        runs[message.call]?.abort();
        return;
      case 'credit':
        runs[message.call]?.credit(message.parts);
        return;
    }
  };
}

// Started as the entry of the process `engine-process.ts` forks (importing this module elsewhere starts nothing).
if (process.env.PVAI_ENGINE_PROCESS === '1' && process.send) serveParent(serveEngine);
