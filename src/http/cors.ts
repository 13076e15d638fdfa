import type Koa from 'koa';
import { AppError } from '../errors/index.js';
import type { AppContext } from './types.js';

/**
 * The request headers a browser app may send cross-origin (the answer to a preflight's
 * Access-Control-Request-Headers): the two ways of presenting a key, the body's type and coding, and
 * the request id.
 */
const ALLOW_HEADERS = 'Authorization, Content-Type, Content-Encoding, X-API-Key, X-Request-Id';
/** The response headers of the contract a browser app may read. */
const EXPOSE_HEADERS =
  'X-Request-Id, X-Cache, X-Credits-Charged, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * OPTIONS and CORS. OPTIONS on a path of the contract is answered here, before authentication (a
 * browser's preflight carries no key): 204 with `Allow`, and 404 for a path the contract does not have.
 * With `origins` configured, a request whose `Origin` is one of them (or any, for `*`) gets
 * `Access-Control-Allow-Origin` on every answer, errors included, and a preflight also gets the
 * methods and headers it may use. API keys travel in headers, never in cookies, so credentials mode
 * (`Access-Control-Allow-Credentials`) is never needed. With no origins (the default) no CORS header
 * is ever sent and browsers keep cross-origin pages out.
 */
export function corsAndOptions(origins: readonly string[], allowedMethods: (path: string) => string[]): Koa.Middleware {
  const anyOrigin = origins.includes('*');
  const listed = new Set(origins);
  return async (ctx: AppContext, next) => {
    const origin = ctx.get('origin');
    const allowOrigin = origin === '' ? undefined : anyOrigin ? '*' : listed.has(origin) ? origin : undefined;
    // The answer depends on Origin whenever it is echoed: caches must keep one copy per origin.
    if (listed.size > 0 && !anyOrigin) ctx.vary('Origin');
    if (allowOrigin) ctx.set('Access-Control-Allow-Origin', allowOrigin);
    if (ctx.method !== 'OPTIONS') {
      if (allowOrigin) ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      return next();
    }
    const methods = allowedMethods(ctx.path);
    if (methods.length === 0) throw new AppError('NOT_FOUND', 'No such endpoint');
    ctx.set('Allow', methods.join(', '));
    if (allowOrigin && ctx.get('access-control-request-method') !== '') {
      ctx.set('Access-Control-Allow-Methods', methods.join(', '));
      ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
      ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    ctx.status = 204;
  };
}
