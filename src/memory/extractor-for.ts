import type { Config } from '../config/index.js';
import type { LlmExtractorOptions } from './llm-extractor.js';
import { LlmExtractor } from './llm-extractor.js';
import { RuleBasedExtractor } from './rule-extractor.js';
import type { FactExtractor } from './types.js';

/** The rules by default; a model through the router when `memory.extractionModel` is configured. */
export function extractorFor(
  memory: Config['memory'],
  router: { generate: LlmExtractorOptions['generate'] },
): FactExtractor {
  const model = memory.extractionModel;
  if (!model) return new RuleBasedExtractor();
  return new LlmExtractor({ model, generate: (m, request, signal) => router.generate(m, request, signal) });
}
