import { isHttpUrl, plainText, searchJson } from './http.js';
import type { SearchProvider, SearchResult } from './types.js';

/**
 * The hits of an answer, as SearchResults: those with an http(s) URL, each URL once, at most `count`.
 * `snippetKey` names the field holding a hit's snippet (`content`, or Brave's `description`).
 */
function results(items: unknown, snippetKey: string, count: number): SearchResult[] {
  if (!Array.isArray(items)) return [];
  const out: SearchResult[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    if (!item || typeof item !== 'object') continue;
    const r = item as Record<string, unknown>;
    const result = { url: String(r.url), title: plainText(r.title), snippet: plainText(r[snippetKey]) };
    if (!isHttpUrl(result.url) || seen.has(result.url)) continue;
    seen.add(result.url);
    out.push(result);
  }
  return out.slice(0, count);
}

/** What Brave and Tavily answer to a key they refuse. */
function keyRefused(status: number): string | undefined {
  return status === 401 || status === 403 ? 'the API key (PVAI_WEB_SEARCH_API_KEY) is refused' : undefined;
}

/**
 * SearXNG (self-hosted): GET <url>/search?q=…&format=json. SearXNG answers 403 to format=json unless
 * `json` is listed in `search.formats` of its settings.yml; the error says so.
 */
export function searxngProvider(baseUrl: string): SearchProvider {
  return {
    name: 'searxng',
    async search(query, count, signal) {
      const url = new URL('search', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
      url.searchParams.set('safesearch', '1');
      const body = (await searchJson('SearXNG', url, { signal }, (status) =>
        status === 403
          ? 'SearXNG refuses JSON answers unless `json` is in `search.formats` of its settings.yml ' +
            '(search: formats: [html, json]); add it and restart SearXNG'
          : undefined,
      )) as { results?: unknown };
      return results(body.results, 'content', count);
    },
  };
}

const BRAVE_ENDPOINT = 'https://api.search.brave.com/res/v1/web/search';

/** Brave Search API: GET ?q=…&count=…, key in X-Subscription-Token; hits in web.results. */
function braveProvider(apiKey: string, endpoint = BRAVE_ENDPOINT): SearchProvider {
  return {
    name: 'brave',
    async search(query, count, signal) {
      const url = new URL(endpoint);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(Math.min(count, 20)));
      const body = (await searchJson(
        'Brave Search',
        url,
        { headers: { 'x-subscription-token': apiKey }, signal },
        keyRefused,
      )) as { web?: { results?: unknown } };
      return results(body.web?.results, 'description', count);
    },
  };
}

const TAVILY_ENDPOINT = 'https://api.tavily.com/search';

/** Tavily: POST {query, max_results}, key as a Bearer token; hits in results. */
function tavilyProvider(apiKey: string, endpoint = TAVILY_ENDPOINT): SearchProvider {
  return {
    name: 'tavily',
    async search(query, count, signal) {
      const body = (await searchJson(
        'Tavily',
        new URL(endpoint),
        {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query, max_results: Math.min(count, 20), search_depth: 'basic' }),
          signal,
        },
        keyRefused,
      )) as { results?: unknown };
      return results(body.results, 'content', count);
    },
  };
}

export interface SearchSettings {
  searchProvider?: 'searxng' | 'brave' | 'tavily' | undefined;
  searchUrl?: string | undefined;
  searchApiKey?: string | undefined;
}

const HOW_TO =
  'set PVAI_WEB_SEARCH_PROVIDER to searxng (with PVAI_WEB_SEARCH_URL, its base URL), brave or tavily ' +
  '(with PVAI_WEB_SEARCH_API_KEY), or `web.searchProvider` in the config file';

/** The configured provider, or why there is none (the message tells the operator how to set one). */
export function createSearchProvider(
  settings: SearchSettings,
): { provider: SearchProvider } | { provider: undefined; reason: string } {
  const { searchProvider, searchUrl, searchApiKey } = settings;
  if (!searchProvider) return { provider: undefined, reason: `Web search is not configured: ${HOW_TO}.` };
  if (searchProvider === 'searxng') {
    if (!searchUrl) {
      return {
        provider: undefined,
        reason: 'Web search is not configured: SearXNG needs its base URL in PVAI_WEB_SEARCH_URL (web.searchUrl).',
      };
    }
    return { provider: searxngProvider(searchUrl) };
  }
  if (!searchApiKey) {
    return {
      provider: undefined,
      reason: `Web search is not configured: ${searchProvider} needs an API key in PVAI_WEB_SEARCH_API_KEY (web.searchApiKey or web.searchApiKeyEnv).`,
    };
  }
  return {
    provider:
      searchProvider === 'brave'
        ? braveProvider(searchApiKey, searchUrl ?? BRAVE_ENDPOINT)
        : tavilyProvider(searchApiKey, searchUrl ?? TAVILY_ENDPOINT),
  };
}
