import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { signInPage } from './pages.js';
import { cookieOptions, send } from './web.js';

/** The sign-in form's token, before any session exists (a double-submit cookie). */
const SIGN_IN_COOKIE = 'pvai_sign_in';
const SIGN_IN_TOKEN_MS = 60 * 60_000;

/**
 * The sign-in form with its status (and the email typed, an error), with a fresh token in its field and in
 * the sign-in cookie: a sign-in form posted from another site has no such cookie and is refused.
 */
export function showSignInForm(ctx: Koa.Context, status: number, o: { email?: string; error?: string } = {}): void {
  const csrfToken = randomBytes(24).toString('base64url');
  ctx.cookies.set(SIGN_IN_COOKIE, csrfToken, cookieOptions(ctx, SIGN_IN_TOKEN_MS));
  send(ctx, status, signInPage({ csrfToken, ...o }));
}

/** The token the sign-in cookie holds, or '' (middleware/csrf.ts compares the form's to it). */
export function signInToken(ctx: Koa.Context): string {
  return ctx.cookies.get(SIGN_IN_COOKIE) ?? '';
}

/** Once signed in, the sign-in token has done its work. */
export function clearSignInToken(ctx: Koa.Context): void {
  ctx.cookies.set(SIGN_IN_COOKIE, '', cookieOptions(ctx, 0));
}

/** The email (trimmed, lower case) and password of a sign-in form, each within its length. */
export function credentialsOf(form: URLSearchParams): { email: string; password: string } {
  return {
    email: (form.get('email') ?? '').trim().toLowerCase().slice(0, 320),
    password: (form.get('password') ?? '').slice(0, 256),
  };
}
