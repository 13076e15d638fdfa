import type { Config } from '../config/index.js';
import { Extractor } from '../extract/index.js';
import type { Embedder } from '../retrieval/index.js';
import { PageFetcher } from './fetcher.js';
import { WebGrounding } from './grounding.js';
import { FetchGuard, type Resolver } from './guard.js';
import { createSearchProvider } from './search/providers.js';

export interface WebGroundingOptions {
  embedder?: Embedder | undefined;
  /** DNS for the SSRF guard (tests inject a stub). */
  resolve?: Resolver;
  env?: NodeJS.ProcessEnv;
}

/** The web grounding the configuration describes (a service without a provider answers 400 when asked). */
export function createWebGrounding(web: Config['web'], options: WebGroundingOptions = {}): WebGrounding {
  const env = options.env ?? process.env;
  const apiKey = web.searchApiKey ?? (web.searchApiKeyEnv ? env[web.searchApiKeyEnv] : undefined);
  const chosen = createSearchProvider({
    searchProvider: web.searchProvider,
    searchUrl: web.searchUrl,
    searchApiKey: apiKey,
  });
  const guard = new FetchGuard({
    allow: web.fetchAllow,
    allowPorts: web.fetchAllowPorts,
    ...(options.resolve ? { resolve: options.resolve } : {}),
  });
  const pageMs = web.pageMs;
  const fetcher = new PageFetcher(guard, {
    ...(web.totalMs !== undefined ? { totalMs: web.totalMs } : {}),
    ...(pageMs !== undefined ? { pageMs } : {}),
    ...(web.maxPageBytes !== undefined ? { maxBytes: web.maxPageBytes } : {}),
    ...(web.concurrency !== undefined ? { concurrency: web.concurrency } : {}),
    ...(web.maxRedirects !== undefined ? { maxRedirects: web.maxRedirects } : {}),
  });
  return new WebGrounding({
    provider: chosen.provider,
    ...(chosen.provider ? {} : { unavailableReason: chosen.reason }),
    fetcher,
    embedder: options.embedder,
    pdf: new Extractor({ timeoutMs: pageMs ?? 2000, concurrency: 1, memoryMb: 256 }),
    limits: {
      ...(web.pages !== undefined ? { pages: web.pages } : {}),
      ...(web.totalMs !== undefined ? { totalMs: web.totalMs } : {}),
      ...(web.maxPassages !== undefined ? { maxPassages: web.maxPassages } : {}),
      ...(web.passageChars !== undefined ? { passageChars: web.passageChars } : {}),
    },
  });
}
