/** Web grounding: search providers, the SSRF-guarded page fetcher, and the chat's `web` context source. */

export { webCapability } from './capability.js';
export { decodePage, htmlText, stripMarkup } from './extract.js';
export { PageFetcher } from './fetcher.js';
export { WebGrounding } from './grounding.js';
export { FetchGuard, type Resolver } from './guard.js';
export { pinnedAgent } from './pinned-agent.js';
export { passages, rank } from './rank.js';
export { createSearchProvider, searxngProvider } from './search/providers.js';
export { SearchError } from './search/types.js';
