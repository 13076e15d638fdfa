import { request } from 'undici';
import { injectTraceContext, TRACING } from '../tracing/index.js';
import { BlockedUrlError, type FetchGuard } from './guard.js';
import { pinnedAgent } from './pinned-agent.js';

export interface FetchLimits {
  /** The whole fetch step (every page, redirects included). */
  totalMs: number;
  /** One page, from its first request to its last byte. */
  pageMs: number;
  /** Bytes read of one page; the rest is not read (the page keeps its first maxBytes). */
  maxBytes: number;
  /** Pages fetched at once. */
  concurrency: number;
  /** Redirects followed for one page, each re-checked by the guard. */
  maxRedirects: number;
}

const DEFAULT_FETCH_LIMITS: FetchLimits = {
  totalMs: 3000,
  pageMs: 2000,
  maxBytes: 2 * 1024 * 1024,
  concurrency: 5,
  maxRedirects: 3,
};

type PageKind = 'html' | 'text' | 'pdf';

export type FetchedPage =
  | { ok: true; url: string; finalUrl: string; kind: PageKind; charset?: string; body: Buffer; truncated: boolean }
  | { ok: false; url: string; reason: string; blocked: boolean };

const ACCEPTED: Record<string, PageKind> = {
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/plain': 'text',
  'application/pdf': 'pdf',
};

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface FetcherOptions {
  userAgent?: string;
  /** Certificate authorities trusted for https pages instead of Node's bundle (tests; private CAs). */
  ca?: string | Buffer;
}

/**
 * Reads web pages for grounding: every hop of every page goes through the FetchGuard (redirects are
 * followed by hand, never by the HTTP client), on a connection pinned to the address the guard checked.
 * A page that fails (refused, too slow, wrong type, an HTTP error) is reported, never thrown: the caller
 * falls back to the search snippet.
 */
export class PageFetcher {
  readonly #guard: FetchGuard;
  readonly #limits: FetchLimits;
  readonly #userAgent: string;
  readonly #ca: string | Buffer | undefined;

  constructor(guard: FetchGuard, limits: Partial<FetchLimits> = {}, options: FetcherOptions = {}) {
    this.#guard = guard;
    this.#limits = { ...DEFAULT_FETCH_LIMITS, ...limits };
    this.#userAgent = options.userAgent ?? 'pvai-web-grounding/1.0';
    this.#ca = options.ca;
  }
  /** A page request's headers (a new object each time: the trace context goes into it when tracing is on). */
  #pageHeaders(): Record<string, string> {
    return {
      'user-agent': this.#userAgent,
      accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/pdf;q=0.8',
      'accept-encoding': 'identity',
    };
  }

  get limits(): Readonly<FetchLimits> {
    return this.#limits;
  }

  /** All pages within the total budget, results in the order of `urls`. */
  async fetchAll(
    urls: readonly string[],
    signal?: AbortSignal,
    totalMs = this.#limits.totalMs,
  ): Promise<FetchedPage[]> {
    const deadline = AbortSignal.timeout(Math.max(1, Math.floor(totalMs)));
    const overall = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const results: FetchedPage[] = new Array(urls.length);
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= urls.length) return;
        results[i] = await this.fetchPage(urls[i] as string, overall);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#limits.concurrency, urls.length) }, worker));
    return results;
  }

  async fetchPage(url: string, signal?: AbortSignal): Promise<FetchedPage> {
    const pageTimeout = AbortSignal.timeout(this.#limits.pageMs);
    const pageSignal = signal ? AbortSignal.any([signal, pageTimeout]) : pageTimeout;
    let current: URL | undefined;
    try {
      let target = await this.#guard.check(url, undefined, pageSignal);
      for (let hop = 0; ; hop++) {
        pageSignal.throwIfAborted();
        const agent = pinnedAgent(target, this.#ca);
        try {
          current = target.url;
          const res = await request(target.url, {
            method: 'GET',
            dispatcher: agent,
            signal: pageSignal,
            headers: TRACING.on ? injectTraceContext(this.#pageHeaders()) : this.#pageHeaders(),
          });
          if (REDIRECTS.has(res.statusCode)) {
            discard(res.body);
            const location = header(res.headers.location);
            if (!location) return failed(url, `redirect ${res.statusCode} without a Location`);
            if (hop >= this.#limits.maxRedirects)
              return failed(url, `more than ${this.#limits.maxRedirects} redirects`);
            target = await this.#guard.check(location, target.url, pageSignal);
            continue;
          }
          if (res.statusCode < 200 || res.statusCode > 299) {
            discard(res.body);
            return failed(url, `HTTP ${res.statusCode}`);
          }
          const type = (header(res.headers['content-type']) ?? '').toLowerCase();
          const kind = ACCEPTED[type.split(';')[0]?.trim() ?? ''];
          if (!kind) {
            discard(res.body);
            return failed(url, `content type ${type || '(none)'} is not html, plain text or pdf`);
          }
          const coding = (header(res.headers['content-encoding']) ?? 'identity').toLowerCase().trim();
          if (coding !== 'identity' && coding !== '') {
            discard(res.body);
            return failed(url, `content encoding ${coding} although identity was asked for`);
          }
          const charset = /charset\s*=\s*"?([\w.:-]+)/.exec(type)?.[1];
          const { body, truncated } = await readCapped(res.body, this.#limits.maxBytes);
          return {
            ok: true,
            url,
            finalUrl: target.url.href,
            kind,
            ...(charset ? { charset } : {}),
            body,
            truncated,
          };
        } finally {
          void agent.destroy().catch(() => {});
        }
      }
    } catch (err) {
      if (err instanceof BlockedUrlError) return { ok: false, url, reason: err.message, blocked: true };
      if (pageSignal.aborted) {
        const why = signal?.aborted ? 'the web step ran out of time' : `the page took over ${this.#limits.pageMs} ms`;
        return failed(url, why);
      }
      return failed(url, `${current ? `${current.href}: ` : ''}${(err as Error).message}`);
    }
  }
}

/** Drops a body not read to its end (the abort it causes is expected, not an error). */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): void }): void {
  body.on('error', () => {});
  body.destroy();
}

function failed(url: string, reason: string): FetchedPage {
  return { ok: false, url, reason, blocked: false };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readCapped(
  body: AsyncIterable<Buffer> & Parameters<typeof discard>[0],
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = maxBytes - size;
    if (chunk.length >= room) {
      chunks.push(chunk.subarray(0, room));
      discard(body);
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}
