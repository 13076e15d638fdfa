import { basename } from 'node:path';
import { collectCompletion } from '../completion-collector.js';
import type { ChatProvider, Completion, GenerationRequest, StreamPart } from '../types.js';
import { abortReason, ProviderError } from '../types.js';
import { LocalEngine, type LocalEngineSettings } from './local-engine.js';
import { planRequest } from './request-plan.js';
import { runPlan } from './run-plan.js';

/**
 * A GGUF run with node-llama-cpp in the process that calls it: a local model's engine process
 * (`engine-process-main.ts`) hosts one, and `LocalChatProvider` relays to it.
 *
 * The model loads on first use (or on `load()`), and is shared by every request: N context sequences
 * serve N requests at once, the next `maxQueue` wait, and the rest fail fast with 'busy'.
 */
export class InProcessLocalProvider implements ChatProvider {
  readonly id: string;
  private engine: Promise<LocalEngine> | undefined;
  private closed = false;
  /** Told of each prompt put in a sequence: its tokens reused from the cache, and those evaluated (the metrics). */
  onPrompt: ((reused: number, evaluated: number) => void) | undefined;

  constructor(private readonly settings: LocalEngineSettings) {
    this.id = `local:${basename(settings.modelPath)}`;
  }

  /** Loads the model now (e.g. at server start) instead of on the first request. */
  async load(): Promise<LocalEngine> {
    if (this.closed) throw new ProviderError('upstream', `${this.id} is closed`);
    this.engine ??= LocalEngine.load(this.settings).catch((err: unknown) => {
      this.engine = undefined; // a later request may try again (e.g. after `models pull`)
      throw new ProviderError('upstream', `cannot load local model ${this.settings.modelPath}: ${messageOf(err)}`, {
        cause: err,
      });
    });
    return this.engine;
  }

  generate(req: GenerationRequest, signal: AbortSignal): Promise<Completion> {
    return collectCompletion(this.stream(req, signal));
  }

  async *stream(req: GenerationRequest, signal: AbortSignal): AsyncGenerator<StreamPart> {
    if (signal.aborted) throw abortReason(signal);
    const engine = await this.load();
    // Render and tokenize before taking a sequence, so the pool can hand out the one whose cache
    // already holds the longest part of this prompt.
    const plan = await planRequest(engine, req);
    const lease = await engine.pool.acquire(
      signal,
      (sequence) => sequence.compareContextTokens(plan.promptTokens).firstDifferentIndex,
    );
    let yielded = false;
    try {
      for await (const part of runPlan({ engine, sequence: lease.item, req, signal, onPrompt: this.onPrompt }, plan)) {
        yielded = true;
        yield part;
      }
    } catch (err) {
      if (signal.aborted) throw abortReason(signal);
      const error =
        err instanceof ProviderError
          ? err
          : new ProviderError('upstream', `local generation failed: ${messageOf(err)}`, {
              cause: err,
              retryable: !yielded,
            });
      if (!yielded) throw error;
      yield { type: 'error', error };
    } finally {
      lease.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const engine = this.engine;
    this.engine = undefined;
    if (engine)
      await engine.then(
        (loaded) => loaded.close(),
        () => undefined,
      );
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
