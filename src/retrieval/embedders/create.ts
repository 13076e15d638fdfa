import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { Embedder } from '../types.js';
import { LocalEmbedder } from './local-embedder.js';
import { OpenAIEmbedder } from './openai-embedder.js';

const DEFAULT_EMBEDDING_MODEL_FILE = 'all-MiniLM-L6-v2.Q8_0.gguf';

export function defaultEmbeddingModelPath(dataDir: string): string {
  return join(resolve(dataDir), 'models', 'embedding', DEFAULT_EMBEDDING_MODEL_FILE);
}

/**
 * The embedder the configuration names (an OpenAI-compatible upstream, PVAI_EMBEDDING_MODEL), or the default model file in the data
 * dir. Without a model file retrieval is lexical only, said once in the log rather than failing the
 * start: chat and everything else work without one.
 */
export function createEmbedder(
  config: Pick<Config, 'embeddingModel' | 'embeddingUpstream' | 'dataDir'>,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Embedder | undefined {
  const upstream = config.embeddingUpstream;
  if (upstream) {
    return new OpenAIEmbedder({
      baseUrl: upstream.baseUrl,
      model: upstream.model,
      apiKey: upstream.apiKeyEnv ? env[upstream.apiKeyEnv] : undefined,
      ...(upstream.batchSize ? { batchSize: upstream.batchSize } : {}),
    });
  }
  const path = config.embeddingModel ?? defaultEmbeddingModelPath(config.dataDir);
  if (/^https?:\/\//.test(path)) {
    logger.warn(
      { embeddingModel: path },
      'embedding model URLs are not fetched at start; run `pvai models pull` first',
    );
    return undefined;
  }
  if (!existsSync(path)) {
    if (config.embeddingModel) throw new Error(`PVAI_EMBEDDING_MODEL: no such file ${path}`);
    logger.info({ path }, 'no embedding model: document retrieval is lexical only');
    return undefined;
  }
  return new LocalEmbedder({ modelPath: resolve(path) });
}
