/** Web grounding: search providers, the SSRF-guarded page fetcher, and the chat's `web` context source. */
export { Allowlist, nonPublicReason } from './address-policy.js';
export { createWebGrounding, type WebGroundingOptions } from './create.js';
export { decodePage, htmlText, pageText, stripMarkup } from './extract.js';
export {
  DEFAULT_FETCH_LIMITS,
  type FetchedPage,
  type FetcherOptions,
  type FetchLimits,
  PageFetcher,
  type PageKind,
} from './fetcher.js';
export {
  DEFAULT_WEB_LIMITS,
  type Grounding,
  type PageOutcome,
  WEB_CACHE_TTL_MS,
  WebGrounding,
  type WebGroundingDeps,
  type WebLimits,
  webContextSource,
} from './grounding.js';
export {
  BlockedUrlError,
  type CheckedTarget,
  FetchGuard,
  type FetchGuardOptions,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from './guard.js';
export { bm25, passages, rank } from './rank.js';
export {
  BRAVE_ENDPOINT,
  braveProvider,
  createSearchProvider,
  searxngProvider,
  TAVILY_ENDPOINT,
  tavilyProvider,
} from './search/providers.js';
export { SearchError, type SearchProvider, type SearchResult } from './search/types.js';
