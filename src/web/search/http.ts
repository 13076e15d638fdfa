import { request } from 'undici';
import { injectTraceContext, TRACING } from '../../tracing/index.js';
import { SearchError } from './types.js';

/** One JSON call to a search provider; its failures are SearchErrors whose message names the provider. */
export async function searchJson(
  provider: string,
  url: URL,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; signal: AbortSignal },
  explain: (status: number, text: string) => string | undefined = () => undefined,
): Promise<unknown> {
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: init.method ?? 'GET',
      headers: TRACING.on
        ? injectTraceContext({ accept: 'application/json', ...init.headers })
        : { accept: 'application/json', ...init.headers },
      ...(init.body !== undefined ? { body: init.body } : {}),
      signal: init.signal,
    });
  } catch (err) {
    if (init.signal.aborted) throw new SearchError(`${provider} did not answer in time`, undefined, true);
    throw new SearchError(`${provider} at ${url.origin} cannot be reached: ${(err as Error).message}`);
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch (err) {
    if (init.signal.aborted) throw new SearchError(`${provider} did not answer in time`, undefined, true);
    throw new SearchError(`${provider}: the answer broke off: ${(err as Error).message}`);
  }
  if (res.statusCode < 200 || res.statusCode > 299) {
    const why = explain(res.statusCode, text) ?? text.slice(0, 200).replace(/\s+/g, ' ').trim();
    throw new SearchError(`${provider} answered HTTP ${res.statusCode}${why ? `: ${why}` : ''}`, res.statusCode);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new SearchError(`${provider} answered something that is not JSON (is ${url.origin} the search API?)`);
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** Providers' snippets may carry markup (Brave's <strong>): plain text for the prompt. */
export function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value
    .slice(0, 4000)
    .replace(/<[^<>]{0,500}>/g, '')
    .replace(/&(amp|lt|gt|quot|apos|nbsp|#39);/g, (_, e: string) => ENTITIES[e] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}
