import { basename } from 'node:path';
import type { ChatProvider, Completion, GenerationRequest, StreamPart } from '../types.js';
import { abortReason, ProviderError } from '../types.js';
import type { EngineCall } from './engine-call.js';
import { EngineProcess } from './engine-process.js';
import type { LocalEngineSettings } from './local-engine.js';

/**
 * A ChatProvider running a GGUF with node-llama-cpp in a process of its own (`engine-process.ts`), where
 * `InProcessLocalProvider` does the work (how the model loads and how requests share it are said there); this
 * side relays requests, parts, aborts and errors, and keeps what the engine reports of its queue and prompts.
 */
export class LocalChatProvider implements ChatProvider {
  readonly id: string;
  #engine: EngineProcess | undefined;
  #queue = { active: 0, queued: 0 };
  /** Counted here, so a restarted engine's prompts add to its predecessor's. */
  #promptTokens = { reused: 0, evaluated: 0 };
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
    return this.#closed ? { active: 0, queued: 0 } : { ...this.#queue };
  }

  /**
   * Prompt tokens since the start: those whose cache a sequence held from an earlier request (a shared system
   * prompt, tools, memory, the conversation so far) and those the model evaluated.
   */
  promptTokens(): { reused: number; evaluated: number } {
    return { ...this.#promptTokens };
  }

  /** The whole answer comes back in one message from the engine (a stream's parts come one a message). */
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
    if (!completion) throw new ProviderError('upstream', 'the local engine ended an answer without it');
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
    const engine = this.#engine;
    if (!engine?.alive) return;
    await this.#run('close').catch(() => undefined);
    engine.release();
  }

  /** Starts a stream or an answer in the engine, aborted with `signal`; `detach` lets go of the signal. */
  #start(t: 'stream' | 'generate', req: GenerationRequest, signal: AbortSignal): { call: EngineCall; detach(): void } {
    if (signal.aborted) throw abortReason(signal);
    if (this.#closed) throw this.#closedError();
    const call = this.#host().start({ t, req });
    const abort = (): void => call.abort();
    signal.addEventListener('abort', abort, { once: true });
    return { call, detach: () => signal.removeEventListener('abort', abort) };
  }

  /** Runs a load or close in the engine; resolves when it ended, rejects with its error. */
  async #run(t: 'load' | 'close'): Promise<void> {
    await this.#host().start({ t }).next();
  }

  /** The engine's process, started on first use (again if the last one stopped). */
  #host(): EngineProcess {
    if (!this.#engine?.alive) {
      this.#engine = new EngineProcess(this.settings, {
        queue: (active, queued) => {
          this.#queue = { active, queued };
        },
        prompt: (reused, evaluated) => {
          this.#promptTokens.reused += reused;
          this.#promptTokens.evaluated += evaluated;
        },
      });
    }
    return this.#engine;
  }

  #closedError(): ProviderError {
    return new ProviderError('upstream', `${this.id} is closed`);
  }
}
