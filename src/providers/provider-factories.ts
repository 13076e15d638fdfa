import { resolve } from 'node:path';
import { LocalChatProvider, type LocalEngineSettings } from './local/index.js';
import { OpenAICompatibleProvider } from './openai-compatible/index.js';
import type { LocalTarget, OpenAICompatibleTarget, ProviderFactories } from './router.js';
import type { ChatProvider } from './types.js';

export interface ProviderFactoryOptions {
  /** Engine settings for every local model (threads, sequences, maxQueue, contextSize, chatWrapper). */
  localEngine?: Omit<LocalEngineSettings, 'modelPath'>;
  /** Maps a local target's `model` to its GGUF path when the target has no `modelPath`. Default: `model` is the path. */
  resolveLocalModelPath?: (model: string) => string;
}

/**
 * The production factories. A GGUF is loaded once however many PV models or targets point at it:
 * local providers are shared by resolved file path. Upstream providers are shared by identical
 * settings, so equal targets also share one connection pool.
 */
export function createProviderFactories(options: ProviderFactoryOptions = {}): ProviderFactories & {
  localQueueState(): { active: number; queued: number };
  localPromptTokens(): { reused: number; evaluated: number };
} {
  const localByPath = new Map<string, LocalChatProvider>();
  const upstreamByKey = new Map<string, ChatProvider>();
  const resolvePath = options.resolveLocalModelPath ?? ((model: string) => model);

  return {
    /** Every local model's sequences, summed: running and waiting requests (for the metrics). */
    localQueueState() {
      let active = 0;
      let queued = 0;
      for (const provider of localByPath.values()) {
        const state = provider.queueState();
        active += state.active;
        queued += state.queued;
      }
      return { active, queued };
    },

    /** Every local model's prompt tokens since the start: reused from a sequence's cache, and evaluated. */
    localPromptTokens() {
      let reused = 0;
      let evaluated = 0;
      for (const provider of localByPath.values()) {
        const counts = provider.promptTokens();
        reused += counts.reused;
        evaluated += counts.evaluated;
      }
      return { reused, evaluated };
    },

    local(target: LocalTarget) {
      const modelPath = resolve(target.modelPath ?? resolvePath(target.model));
      let provider = localByPath.get(modelPath);
      if (!provider) {
        provider = new LocalChatProvider({ ...options.localEngine, modelPath });
        localByPath.set(modelPath, provider);
      }
      return provider;
    },

    'openai-compatible'(target: OpenAICompatibleTarget) {
      const settings = {
        baseUrl: target.baseUrl,
        model: target.model,
        ...(target.apiKey !== undefined ? { apiKey: target.apiKey } : {}),
        ...(target.timeoutMs !== undefined ? { timeoutMs: target.timeoutMs } : {}),
        ...(target.maxRetries !== undefined ? { maxRetries: target.maxRetries } : {}),
        ...(target.retryBaseDelayMs !== undefined ? { retryBaseDelayMs: target.retryBaseDelayMs } : {}),
        ...(target.maxRetryAfterMs !== undefined ? { maxRetryAfterMs: target.maxRetryAfterMs } : {}),
        ...(target.headers !== undefined ? { headers: target.headers } : {}),
      };
      const key = JSON.stringify(settings);
      let provider = upstreamByKey.get(key);
      if (!provider) {
        provider = new OpenAICompatibleProvider(settings);
        upstreamByKey.set(key, provider);
      }
      return provider;
    },
  };
}
