import { type ContextContribution, type ContextSource, lastUserText, type SourcePassage } from '../chat/index.js';
import { AppError } from '../errors/index.js';
import type { Extractor } from '../extract/index.js';
import { untilAborted } from '../kernel/index.js';
import type { Embedder } from '../retrieval/index.js';
import { pageText } from './extract.js';
import type { PageFetcher } from './fetcher.js';
import { type Candidate, passages, rank } from './rank.js';
import { SearchError, type SearchProvider } from './search/types.js';

/** Web-grounded answers are cached 5 minutes: the web moves, and a question about today stays about today. */
const WEB_CACHE_TTL_MS = 5 * 60 * 1000;

export interface WebLimits {
  /** Search results read per question. */
  pages: number;
  /** The whole web step: search + fetch + extract + rank. */
  totalMs: number;
  /** Passages put into the prompt. */
  maxPassages: number;
  /** Passages from one page (so one long page does not crowd out the others). */
  perPage: number;
  /** Characters of all passages together (~2,000 tokens): the prompt budget trims further if needed. */
  passageChars: number;
}

const DEFAULT_WEB_LIMITS: WebLimits = {
  pages: 5,
  totalMs: 3000,
  maxPassages: 5,
  perPage: 2,
  passageChars: 6000,
};

/** Of the total budget, the part kept for extraction and ranking after the pages are in. */
const EXTRACT_RESERVE = 0.15;

export interface WebGroundingDeps {
  provider: SearchProvider | undefined;
  /** Why there is no provider: the message of 400 WEB_SEARCH_UNAVAILABLE. */
  unavailableReason?: string;
  fetcher: PageFetcher;
  embedder?: Embedder | undefined;
  /** PDF pages go through the documents' extraction worker. */
  pdf?: Extractor | undefined;
  limits?: Partial<WebLimits>;
}

interface PageOutcome {
  url: string;
  /** Read and used as text, or replaced by the search snippet (with why). */
  read: boolean;
  reason?: string;
}

export interface Grounding {
  passages: SourcePassage[];
  pages: PageOutcome[];
  timings: { searchMs: number; fetchMs: number; extractMs: number; rankMs: number; totalMs: number };
}

/**
 * Search → read the best pages (SSRF-guarded, within the time budget) → passages ranked against the
 * question → numbered sources with `web` citations. A page that cannot be read falls back to its search
 * snippet; only a failed search fails the request (502/504), refunded by the chat pipeline.
 */
export class WebGrounding {
  readonly #deps: WebGroundingDeps;
  readonly limits: WebLimits;

  constructor(deps: WebGroundingDeps) {
    this.#deps = deps;
    this.limits = { ...DEFAULT_WEB_LIMITS, ...deps.limits };
  }

  get provider(): SearchProvider | undefined {
    return this.#deps.provider;
  }

  /** 400 WEB_SEARCH_UNAVAILABLE, saying how to configure a provider, when none is. */
  assertAvailable(): SearchProvider {
    const { provider, unavailableReason } = this.#deps;
    if (!provider) {
      throw new AppError(
        'WEB_SEARCH_UNAVAILABLE',
        unavailableReason ?? 'Web search is not configured on this service.',
      );
    }
    return provider;
  }

  /**
   * `pagesAtMost`: read at most this many (the Responses API's `search_context_size`), never more than the
   * limit; `domains`: only results on these domains or their subdomains (its `filters.allowed_domains`).
   */
  async ground(
    query: string,
    signal: AbortSignal,
    pagesAtMost?: number,
    domains?: readonly string[],
  ): Promise<Grounding> {
    const provider = this.assertAvailable();
    const limits =
      pagesAtMost === undefined ? this.limits : { ...this.limits, pages: Math.min(pagesAtMost, this.limits.pages) };
    const started = performance.now();
    const budget = AbortSignal.any([signal, AbortSignal.timeout(limits.totalMs)]);

    let results: Awaited<ReturnType<SearchProvider['search']>>;
    try {
      results = await provider.search(query, limits.pages, budget);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (err instanceof SearchError) {
        throw new AppError(
          err.timedOut ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR',
          `Web search failed: ${err.message}`,
          { provider: provider.name, ...(err.status !== undefined ? { status: err.status } : {}) },
          {},
          { cause: err },
        );
      }
      throw err;
    }
    const searched = performance.now();
    if (domains && domains.length > 0) results = results.filter((r) => onDomains(r.url, domains));
    results = results.slice(0, limits.pages);

    const left = limits.totalMs - (searched - started) - limits.totalMs * EXTRACT_RESERVE;
    const fetched = await this.#deps.fetcher.fetchAll(
      results.map((r) => r.url),
      signal,
      Math.max(1, left),
    );
    const gotPages = performance.now();

    const candidates: Candidate[] = [];
    const pages: PageOutcome[] = [];
    const titles: string[] = [];
    const urls: string[] = [];
    for (const [i, result] of results.entries()) {
      const page = fetched[i];
      let text = '';
      let reason: string | undefined;
      let title: string | undefined;
      if (page?.ok) {
        try {
          if (budget.aborted) throw outOfTime();
          // Extraction runs on the event loop: other requests get their turn between two pages.
          await new Promise<void>((resolve) => setImmediate(resolve));
          // A PDF is parsed in a worker: its result is waited for only while the budget lasts.
          const extracted = await untilAborted(pageText(page, this.#deps.pdf), budget, outOfTime);
          text = extracted.text;
          title = extracted.title;
          if (!text) reason = 'no readable text';
        } catch (err) {
          reason = `unreadable: ${(err as Error).message}`;
        }
      } else {
        reason = page ? page.reason : 'not fetched';
      }
      titles.push(result.title || title || result.url);
      urls.push(page?.ok ? page.finalUrl : result.url);
      const split = text ? passages(text) : [];
      if (split.length > 0) {
        for (const p of split) candidates.push({ page: i, text: p, fallback: false });
        pages.push({ url: result.url, read: true });
      } else {
        if (result.snippet) candidates.push({ page: i, text: result.snippet, fallback: true });
        pages.push({ url: result.url, read: false, ...(reason ? { reason } : {}) });
      }
    }
    const extracted = performance.now();

    const ranked = await rank(query, candidates, this.#deps.embedder, budget.aborted ? undefined : budget);
    const chosen: SourcePassage[] = [];
    const perPage = new Map<number, number>();
    let chars = 0;
    for (const passage of ranked) {
      if (chosen.length >= limits.maxPassages) break;
      if (passage.score <= 0 && !passage.fallback) continue;
      if ((perPage.get(passage.page) ?? 0) >= limits.perPage) continue;
      if (chars + passage.text.length > limits.passageChars) continue;
      chars += passage.text.length;
      perPage.set(passage.page, (perPage.get(passage.page) ?? 0) + 1);
      const url = urls[passage.page] as string;
      chosen.push({
        text: `${url}\n${passage.text}`,
        citation: {
          source: 'web',
          url,
          title: titles[passage.page] as string,
          snippet: passage.text,
          score: Math.round(passage.score * 10_000) / 10_000,
        },
      });
    }
    const done = performance.now();
    return {
      passages: chosen,
      pages,
      timings: {
        searchMs: searched - started,
        fetchMs: gotPages - searched,
        extractMs: extracted - gotPages,
        rankMs: done - extracted,
        totalMs: done - started,
      },
    };
  }
}

const outOfTime = () => new Error('the web step ran out of time');

/** Whether the URL's host is one of the domains or under one ("docs.python.org" is under "python.org"). */
function onDomains(url: string, domains: readonly string[]): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return domains.some((d) => {
    const domain = d.toLowerCase().replace(/^\.+|\.+$/g, '');
    return host === domain || host.endsWith(`.${domain}`);
  });
}

/**
 * `use_web_search: true`. Not personal (no version: the same question from the same account may reuse
 * the answer), but short-lived: the contribution asks for WEB_CACHE_TTL_MS. Without a provider, the
 * request is refused before any credit is taken (version() runs before the charge).
 */
export function webContextSource(web: WebGrounding): ContextSource {
  return {
    name: 'web',
    applies: (request) => request.use_web_search === true,
    version: async () => {
      web.assertAvailable();
      return undefined;
    },
    async contribute(_principal, request, signal): Promise<ContextContribution> {
      web.assertAvailable();
      const query = lastUserText(request).trim();
      if (!query) return { passages: [], cacheTtlMs: WEB_CACHE_TTL_MS };
      const grounding = await web.ground(query.slice(0, 400), signal, request.web_pages, request.web_domains);
      return { passages: grounding.passages, itemsRetrieved: grounding.passages.length, cacheTtlMs: WEB_CACHE_TTL_MS };
    },
  };
}
