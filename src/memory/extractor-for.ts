import type { Config } from '../config/index.js';
import type { Embedder } from '../retrieval/index.js';
import { StatementExtractor } from './extraction/statement-extractor.js';
import type { LlmExtractorOptions } from './llm-extractor.js';
import { LlmExtractor } from './llm-extractor.js';
import type { FactExtractor } from './types.js';

/**
 * The statement model by default (on the service's embedder when it is the one the model was trained on,
 * its words-only head otherwise); a model through the router when `memory.extractionModel` is configured.
 */
export function extractorFor(
  memory: Config['memory'],
  router: { generate: LlmExtractorOptions['generate'] },
  embedder: Embedder | undefined,
): FactExtractor {
  const model = memory.extractionModel;
  if (!model) return new StatementExtractor({ embedder });
  return new LlmExtractor({ model, generate: (m, request, signal) => router.generate(m, request, signal) });
}
