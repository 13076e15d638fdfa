import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type Koa from 'koa';
import Router from 'koa-router';
import type { RequestState } from './types.js';

const PREFIX = '/docs/assets/';

/**
 * The reference page's two static files, from the swagger-ui-dist package (no CDN), under /docs/assets/.
 * Only these paths go through koa-router: matching its routes for every API request would be work for
 * nothing.
 */
export function referenceAssets(): Koa.Middleware<RequestState> {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = {
    'swagger-ui.css': 'text/css',
    'swagger-ui-bundle.js': 'application/javascript',
  } as const;
  const router = new Router();
  for (const [name, type] of Object.entries(files)) {
    const body = readFileSync(join(dir, name));
    router.get(`${PREFIX}${name}`, (ctx) => {
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = body;
    });
  }
  const assets = router.routes() as unknown as Koa.Middleware<RequestState>;
  return (ctx, next) => (ctx.path.startsWith(PREFIX) ? assets(ctx, next) : next());
}
