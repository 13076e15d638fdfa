import Router from 'koa-router';
import { DASHBOARD_CSS, DASHBOARD_JS } from '../assets.js';
import { DASHBOARD_PATH } from '../web.js';

/** The stylesheet and the script: the same for everyone, cached an hour, served before any session is looked up. */
export function assetRoutes(): Router {
  const router = new Router({ prefix: `${DASHBOARD_PATH}/assets` });
  const asset = (type: string, body: string) => (ctx: Router.IRouterContext) => {
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  };
  router.get('/dashboard.css', asset('text/css; charset=utf-8', DASHBOARD_CSS));
  router.get('/dashboard.js', asset('application/javascript; charset=utf-8', DASHBOARD_JS));
  return router;
}
