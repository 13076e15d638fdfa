import type { Config } from '../config/index.js';
import type { Embedder } from '../retrieval/index.js';
import { createWebGrounding } from './create.js';
import { webContextSource } from './grounding.js';

/** Web grounding: search and guarded page fetching, ranked with the shared embedder; chat draws on it. */
export function webCapability(web: Config['web'], deps: { embedder: Embedder | undefined }) {
  const service = createWebGrounding(web, deps);
  return { name: 'web', service, context: webContextSource(service) };
}
