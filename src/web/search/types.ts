/** One hit of a web search, as every provider is normalised to. */
export interface SearchResult {
  url: string;
  title: string;
  /** The provider's short extract (plain text): the fallback passage when the page cannot be read. */
  snippet: string;
}

/** The search-provider port: SearXNG, Brave Search and Tavily are its adapters. */
export interface SearchProvider {
  readonly name: 'searxng' | 'brave' | 'tavily';
  search(query: string, count: number, signal: AbortSignal): Promise<SearchResult[]>;
}

/** A search that failed: `status` is the provider's HTTP status, when it answered. */
export class SearchError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = 'SearchError';
  }
}
