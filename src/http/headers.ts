import type { AppContext } from './types.js';

/**
 * Sets response headers whose values are plain strings, straight on Node's response. Koa's `ctx.set` makes an
 * entries array, a tuple per header and a lower-cased name to look up, ~4.4 KB a chat request over its eight
 * headers (the largest single allocator in bench:chat's heap profile); the headers on every answer go here.
 */
export function setHeaders(ctx: AppContext, headers: Readonly<Record<string, string>>): void {
  if (ctx.headerSent) return;
  for (const name in headers) ctx.res.setHeader(name, headers[name] as string);
}
