import { isIP } from 'node:net';
import { z } from 'zod';

/** Origins (`http://127.0.0.1:8089`) and CIDRs (`10.0.0.0/8`) reached although not public. */
const allowList = z
  .array(
    z
      .string()
      .trim()
      .refine(isAllowEntry, 'each entry must be an origin (http://host:port, no path) or a CIDR (10.0.0.0/8)'),
  )
  .default([]);

/**
 * Web grounding (`use_web_search`): the search provider and the page fetcher's limits. Every limit is
 * optional here; the defaults, and why, are in src/web (DEFAULT_WEB_LIMITS, DEFAULT_FETCH_LIMITS).
 * Environment: PVAI_WEB_SEARCH_PROVIDER, PVAI_WEB_SEARCH_URL, PVAI_WEB_SEARCH_API_KEY, PVAI_WEB_FETCH_ALLOW
 * (comma-separated origins and CIDRs).
 */
export const webSchema = z
  .object({
    searchProvider: z.enum(['searxng', 'brave', 'tavily']).optional(),
    /** SearXNG: its base URL (required). Brave, Tavily: the search endpoint, when not the public one. */
    searchUrl: z.string().url().optional(),
    searchApiKey: z.string().min(1).optional(),
    /** Environment variable holding the API key (instead of searchApiKey in the file). */
    searchApiKeyEnv: z.string().min(1).optional(),
    /** Pages read per question. */
    pages: z.number().int().min(1).max(10).optional(),
    /** The whole web step: search, fetching, extraction and ranking. */
    totalMs: z.number().int().min(100).max(30_000).optional(),
    pageMs: z.number().int().min(50).max(30_000).optional(),
    maxPageBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .optional(),
    concurrency: z.number().int().min(1).max(32).optional(),
    maxRedirects: z.number().int().min(0).max(10).optional(),
    /** Passages put into the prompt, and their characters in all. */
    maxPassages: z.number().int().min(1).max(50).optional(),
    passageChars: z.number().int().min(200).max(100_000).optional(),
    /** Origins (`http://127.0.0.1:8089`) and CIDRs (`10.0.0.0/8`) fetched although not public. */
    fetchAllow: allowList,
    /** Ports fetched besides 80 and 443 (an allowlisted origin's port always is). */
    fetchAllowPorts: z.array(z.number().int().min(1).max(65535)).default([]),
  })
  .strict()
  .default({ fetchAllow: [], fetchAllowPorts: [] });

/** `http(s)://host[:port]` without a path, or an IP address with an optional /prefix. */
function isAllowEntry(entry: string): boolean {
  if (/^https?:\/\//i.test(entry)) {
    try {
      const url = new URL(entry);
      return url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    } catch {
      return false;
    }
  }
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

type Env = Record<string, string | undefined>;

/** A comma-separated variable's entries, trimmed, the empty ones left out. */
function commaList(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The PVAI_WEB_* variables over the file's `web` object. */
export function webFromEnv(env: Env, file: unknown): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = file && typeof file === 'object' ? { ...(file as object) } : {};
  let any = file !== undefined;
  const set = (name: string, key: string, value: unknown) => {
    if (env[name] === undefined || env[name] === '') return;
    out[key] = value;
    any = true;
  };
  set('PVAI_WEB_SEARCH_PROVIDER', 'searchProvider', env.PVAI_WEB_SEARCH_PROVIDER?.trim().toLowerCase());
  set('PVAI_WEB_SEARCH_URL', 'searchUrl', env.PVAI_WEB_SEARCH_URL?.trim());
  set('PVAI_WEB_SEARCH_API_KEY', 'searchApiKey', env.PVAI_WEB_SEARCH_API_KEY);
  set('PVAI_WEB_FETCH_ALLOW', 'fetchAllow', commaList(env.PVAI_WEB_FETCH_ALLOW));
  return any ? out : undefined;
}

/**
 * Remote MCP servers named by a Responses `mcp` tool: the connection policy (docs/mcp.md). Public addresses on any
 * port; private ones (loopback, RFC 1918, link-local, ...) only by `allow` (origins and CIDRs, as the web fetcher's
 * `fetchAllow`; PVAI_MCP_ALLOW). Each listing and each call has its time, each HTTP answer its size.
 */
export const mcpSchema = z
  .object({
    allow: allowList,
    listTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
    callTimeoutMs: z.number().int().min(100).max(600_000).default(60_000),
    maxResponseBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(4 * 1024 * 1024),
  })
  .strict()
  .default({ allow: [], listTimeoutMs: 10_000, callTimeoutMs: 60_000, maxResponseBytes: 4 * 1024 * 1024 });

/** PVAI_MCP_ALLOW (comma-separated origins and CIDRs) over the file's `mcp.allow`. */
export function mcpFromEnv(env: Env, file: unknown): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = file && typeof file === 'object' ? { ...(file as object) } : {};
  const allow = commaList(env.PVAI_MCP_ALLOW);
  if (allow && allow.length > 0) out.allow = allow;
  return file !== undefined || (allow && allow.length > 0) ? out : undefined;
}
