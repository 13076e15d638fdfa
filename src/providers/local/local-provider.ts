import { basename } from 'node:path';
import type { ChatProvider, Completion, GenerationRequest, StreamPart } from '../types.js';
import { abortReason, ProviderError } from '../types.js';
import { type EngineCall, type EngineThread, engineThread } from './engine-thread.js';
import type { LocalEngineSettings } from './local-engine.js';

/** This model on the engine's thread: the thread, the model's number there, and the counts they share. */
interface Hosted {
  thread: EngineThread;
  provider: number;
  state: Int32Array;
  promptTokens: BigInt64Array;
}

/**
 * A ChatProvider running a GGUF with node-llama-cpp on the local engine's thread (`engine-thread.ts`),
 * where `InProcessLocalProvider` does the work (how the model loads and how requests share it are said
 * there); this side relays requests, parts, aborts and errors.
 */
export class LocalChatProvider implements ChatProvider {
  readonly id: string;
  #hosted: Hosted | undefined;
  /** What earlier engine threads counted (a stopped thread's counts are kept, a new thread's start at 0). */
  #promptTokensBefore = { reused: 0, evaluated: 0 };
  #loading: Promise<void> | undefined;
  #closed = false;

  constructor(private readonly settings: LocalEngineSettings) {
    this.id = `local:${basename(settings.modelPath)}`;
  }

  /** Loads the model now (e.g. at server start) instead of on the first request. */
  load(): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    this.#loading ??= this.#run('load').catch((err: unknown) => {
      this.#loading = undefined; // a later request may try again (e.g. after `models pull`)
      throw err;
    });
    return this.#loading;
  }

  /** Requests holding a sequence (active) and waiting for one (queued); zeros before the model loads. */
  queueState(): { active: number; queued: number } {
    const state = this.#closed ? undefined : this.#hosted?.state;
    if (!state) return { active: 0, queued: 0 };
    return { active: Atomics.load(state, 0), queued: Atomics.load(state, 1) };
  }

  /**
   * Prompt tokens since the start: those whose cache a sequence held from an earlier request (a shared system
   * prompt, tools, memory, the conversation so far) and those the model evaluated.
   */
  promptTokens(): { reused: number; evaluated: number } {
    const counts = this.#hosted?.promptTokens;
    const before = this.#promptTokensBefore;
    if (!counts) return { ...before };
    return {
      reused: before.reused + Number(Atomics.load(counts, 0)),
      evaluated: before.evaluated + Number(Atomics.load(counts, 1)),
    };
  }

  /** The whole answer comes back in one message from the engine's thread (a stream's parts come one a message). */
  async generate(req: GenerationRequest, signal: AbortSignal): Promise<Completion> {
    const { call, detach } = this.#start('generate', req, signal);
    try {
      await call.next(); // resolves at the end (the sequence back in the pool), rejects with the call's error
    } catch (err) {
      if (signal.aborted) throw abortReason(signal);
      throw err;
    } finally {
      detach();
    }
    const completion = call.completion;
    if (!completion) throw new ProviderError('upstream', 'the local engine thread ended an answer without it');
    return completion;
  }

  async *stream(req: GenerationRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
    const { call, detach } = this.#start('stream', req, signal);
    try {
      for (;;) {
        const part = await call.next();
        if (part === undefined) return;
        yield part;
      }
    } catch (err) {
      if (signal.aborted) throw abortReason(signal);
      throw err;
    } finally {
      detach();
      // A consumer that stopped early (or an abort) ends the generation; the sequence is back when this returns.
      if (!call.ended) {
        call.abort();
        await call.settled();
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#loading = undefined;
    if (this.#hosted?.thread.alive) await this.#run('close').catch(() => undefined);
  }

  /** Starts a stream or an answer on the engine's thread, aborted with `signal`; `detach` lets go of the signal. */
  #start(t: 'stream' | 'generate', req: GenerationRequest, signal: AbortSignal): { call: EngineCall; detach(): void } {
    if (signal.aborted) throw abortReason(signal);
    if (this.#closed) throw this.#closedError();
    const { thread, provider } = this.#host();
    const call = thread.start({ t, provider, req });
    const abort = (): void => call.abort();
    signal.addEventListener('abort', abort, { once: true });
    return { call, detach: () => signal.removeEventListener('abort', abort) };
  }

  /** Runs a load or close on the engine's thread; resolves when it ended, rejects with its error. */
  async #run(t: 'load' | 'close'): Promise<void> {
    const { thread, provider } = this.#host();
    const call = thread.start({ t, provider });
    await call.next();
  }

  /** This model on the engine's thread, opened there on first use (again if that thread stopped). */
  #host(): Hosted {
    if (!this.#hosted?.thread.alive) {
      this.#promptTokensBefore = this.promptTokens();
      const thread = engineThread();
      this.#hosted = { thread, ...thread.open(this.settings) };
    }
    return this.#hosted;
  }

  #closedError(): ProviderError {
    return new ProviderError('upstream', `${this.id} is closed`);
  }
}
