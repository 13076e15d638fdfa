import { Agent, fetch as fetchFrom } from 'undici';
import type { TestServer } from './server.js';

/** An account with a dashboard password, made through the admin API. */
export async function accountWithPassword(
  server: TestServer,
  tier = 'startup',
  credits = 1000,
): Promise<{ accountId: string; apiKey: string; email: string; password: string }> {
  const email = `dev-${Math.random().toString(36).slice(2)}@example.com`;
  const password = `pw-${Math.random().toString(36).slice(2)}-secret`;
  const res = await server.request<{ account: { id: string }; api_key: string }>('POST', '/admin/accounts', {
    admin: true,
    body: { email, tier, credits, password },
  });
  if (res.status !== 201) throw new Error(`account creation failed: ${res.status} ${res.text}`);
  return { accountId: res.body.account.id, apiKey: res.body.api_key, email, password };
}

export interface PageResponse {
  status: number;
  location: string | null;
  html: string;
  headers: Headers;
}

/** A browser-less dashboard client over plain HTTP: a cookie jar, and the CSRF token of the last page. */
export class DashboardClient {
  readonly #base: string;
  readonly cookies = new Map<string, string>();
  csrf = '';
  /** The last page's HTML. */
  lastHtml: string | undefined;

  /** Connections from `from` (a loopback address such as 127.0.0.2): the server sees another client address. */
  readonly #agent: Agent | undefined;

  constructor(base: string, options: { from?: string } = {}) {
    this.#base = base;
    this.#agent = options.from ? new Agent({ localAddress: options.from }) : undefined;
  }

  /** Closes the connections of a client made with `from`. */
  async close(): Promise<void> {
    await this.#agent?.close();
  }

  async #fetch(method: string, path: string, form?: Record<string, string>, headers: Record<string, string> = {}) {
    const agent = this.#agent;
    const send = agent
      ? (url: string, init: RequestInit) =>
          fetchFrom(url, { ...(init as object), dispatcher: agent }) as Promise<Response>
      : fetch;
    const res = await send(this.#base + path, {
      method,
      redirect: 'manual',
      headers: {
        ...headers,
        ...(this.cookies.size ? { Cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const [name = '', ...rest] = pair.split('=');
      const value = rest.join('=');
      if (value && !/max-age=0|expires=thu, 01 jan 1970/i.test(cookie)) this.cookies.set(name, value);
      else this.cookies.delete(name);
    }
    const html = await res.text();
    this.lastHtml = html;
    const token = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    return { status: res.status, location: res.headers.get('location'), html, headers: res.headers };
  }

  get(path: string): Promise<PageResponse> {
    return this.#fetch('GET', path);
  }

  /** A form POST; `_csrf` is the last page's token unless the form gives its own. */
  post(path: string, form: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<PageResponse> {
    return this.#fetch('POST', path, { _csrf: this.csrf, ...form }, headers);
  }

  async signIn(email: string, password: string): Promise<PageResponse> {
    await this.get('/dashboard/sign-in');
    return this.post('/dashboard/sign-in', { email, password });
  }
}

/** The plaintext key a created-key page shows once. */
export function shownKey(html: string): string | undefined {
  return /<code id="new-key-secret">([^<]+)<\/code>/.exec(html)?.[1];
}

/** The ids of the keys a keys page has revoke buttons for. */
export function revocableKeyIds(html: string): string[] {
  return [...html.matchAll(/action="\/dashboard\/keys\/([^/"]+)\/revoke"/g)].map((m) => m[1] ?? '');
}
