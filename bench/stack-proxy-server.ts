/**
 * The floor of the stack pvai is built on: Koa, pvai's JSON body reader and openapi-backend routing and
 * validating `POST /z1/chat/completions` against the contract with pvai's own settings, then the same
 * upstream call as pvai, the answer parsed and serialised again (a gateway that renames the model must).
 * No product work: no API key lookup, limits, credits, usage rows, cache or routing table. Run in its own
 * process by bench:chat; prints its URL on stdout. Usage: stack-proxy-server.ts <upstream origin>.
 */
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Context as OpenApiContext } from 'openapi-backend';
import { Pool } from 'undici';
import { contractBackend, jsonBody, openApiRequest, useIndexedRouter } from '../src/http/index.js';
import { bufferedRequest } from '../src/providers/index.js';

const upstream = process.argv[2];
if (!upstream) throw new Error('usage: stack-proxy-server.ts <upstream origin>');
const pool = new Pool(upstream, { connections: 64 });

const api = contractBackend();
api.register({
  createChatCompletion: async (c: OpenApiContext, ctx: Koa.Context) => {
    const { user_id: _user, skip_cache: _skip, ...request } = c.request.requestBody as Record<string, unknown>;
    const answer = await bufferedRequest(
      pool,
      {
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...request, model: 'mock-model' }),
      },
      new AbortController().signal,
      60_000,
    );
    ctx.status = answer.statusCode;
    ctx.body = { ...(JSON.parse(answer.body) as object), model: request.model };
  },
  notFound: (_c: OpenApiContext, ctx: Koa.Context) => {
    ctx.status = 404;
  },
  validationFail: (_c: OpenApiContext, ctx: Koa.Context) => {
    ctx.status = 400;
  },
});
// Authentication is product work: every scheme admits every request here.
for (const scheme of ['BearerAuth', 'ApiKeyHeader', 'AdminToken']) api.registerSecurityHandler(scheme, () => true);
await api.init();
useIndexedRouter(api);

const app = new Koa({ proxy: false });
app.silent = true;
app.use(jsonBody({ limitBytes: 1024 * 1024, maxDepth: 64, idleTimeoutMs: 5000 }));
app.use(async (ctx) => {
  await api.handleRequest(openApiRequest(ctx), ctx);
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
