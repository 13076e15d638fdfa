/**
 * What every dashboard page's request and answer go through: its path and its cookies' flags, the headers
 * of every answer (no caching, no framing, only the service's own scripts), pages and redirects, forms read
 * within their limit, and the check that a browser's form came from this dashboard's origin.
 */
import type { Readable } from 'node:stream';
import type Koa from 'koa';
import { AppError } from '../errors/index.js';

export const DASHBOARD_PATH = '/dashboard';
const FORM_LIMIT_BYTES = 16 * 1024;

/** The dashboard's cookies (session, sign-in token): script-proof, same-site only, sent under its path alone. */
export function cookieOptions(ctx: Koa.Context, maxAge: number) {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: DASHBOARD_PATH,
    secure: ctx.secure,
    maxAge,
    overwrite: true,
  } as const;
}

/** What the pages' answers always carry: no caching, no framing, only the service's own scripts. */
function secureHeaders(ctx: Koa.Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
      "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
}

/** An HTML page with its status. */
export function send(ctx: Koa.Context, status: number, page: string): void {
  secureHeaders(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page;
}

/**
 * A file to save (`Content-Disposition: attachment`), streamed: a failure after its first bytes cuts the
 * connection, so the browser reports a failed download rather than saving a truncated file as if whole.
 */
export function download(ctx: Koa.Context, filename: string, body: Readable): void {
  secureHeaders(ctx);
  ctx.status = 200;
  ctx.type = 'application/json';
  const ascii = filename.replace(/[^A-Za-z0-9._-]/g, '_');
  ctx.set('Content-Disposition', `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`);
  body.once('error', () => ctx.res.destroy());
  ctx.body = body;
}

/** A small text file to save (the usage CSV): built whole before the first byte, so never cut short. */
export function downloadText(ctx: Koa.Context, filename: string, type: string, body: string): void {
  secureHeaders(ctx);
  ctx.status = 200;
  ctx.type = type;
  ctx.set('Content-Disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
  ctx.body = body;
}

/** 303 to `location` (after a form, and to the sign-in page). */
export function seeOther(ctx: Koa.Context, location: string): void {
  secureHeaders(ctx);
  ctx.status = 303;
  ctx.set('Location', location);
  ctx.body = '';
}

/** A urlencoded form body, at most FORM_LIMIT_BYTES. */
export async function readForm(ctx: Koa.Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Forms are sent as application/x-www-form-urlencoded');
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > FORM_LIMIT_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The form is too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) throw new AppError('PAYLOAD_TOO_LARGE', 'The form is too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** A browser's Origin, when it sends one, must be this server's (a second guard beside the token). */
export function sameOrigin(ctx: Koa.Context): boolean {
  const origin = ctx.get('origin');
  return !origin || origin === `${ctx.protocol}://${ctx.host}`;
}

/** The answer to a form without this dashboard's token or from another origin (403). */
export const CSRF_REFUSED = 'This form has expired or did not come from this dashboard. Reload the page and try again.';
