import type Koa from 'koa';

/** Another prefix for the paths under `to` (HttpPorts.pathAliases), e.g. OpenAI's `/v1` for `/z1`. */
export interface PathAlias {
  prefix: string;
  to: string;
}

/** The path a request is served as: an alias's prefix replaced by what it stands for, else the path as sent. */
export function aliasedPath(aliases: readonly PathAlias[], path: string): string {
  for (const { prefix, to } of aliases) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return to + path.slice(prefix.length);
  }
  return path;
}

/**
 * Requests under an alias's prefix are served as the paths it stands for, by everything after this stage (the
 * dashboard's routes, CORS, the contract's routing and validation): the same operation, the same answer. The query
 * is kept; `ctx.originalUrl` keeps the path as sent.
 */
export function pathAliases(aliases: readonly PathAlias[]): Koa.Middleware {
  return (ctx, next) => {
    const path = aliasedPath(aliases, ctx.path);
    if (path !== ctx.path) ctx.path = path;
    return next();
  };
}
