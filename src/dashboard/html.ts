/** HTML for the dashboard's pages: escaped by default, one layout, no script or style but the served assets. */

/** Text or an attribute value, escaped for HTML. */
function escapeHtml(value: unknown): string {
  return String(value)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Markup already built (escaped) by this module's functions. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** A tagged template: interpolated values are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

type Section = 'keys' | 'usage' | 'logs' | 'sla' | 'users' | 'documents' | 'memory' | 'models' | 'password';

const NAV: ReadonlyArray<{ section: Section; label: string; path: string }> = [
  { section: 'keys', label: 'API keys', path: '/dashboard/keys' },
  { section: 'usage', label: 'Usage', path: '/dashboard/usage' },
  { section: 'logs', label: 'Logs', path: '/dashboard/logs' },
  { section: 'sla', label: 'SLA', path: '/dashboard/sla' },
  { section: 'users', label: 'End users', path: '/dashboard/end-users' },
  { section: 'documents', label: 'Documents', path: '/dashboard/documents' },
  { section: 'memory', label: 'Memory', path: '/dashboard/memory' },
  { section: 'models', label: 'Models', path: '/dashboard/models' },
];

export interface LayoutOptions {
  title: string;
  /** The signed-in account: the navigation and the sign-out form; absent on the sign-in page. */
  session?: { email: string; csrfToken: string; tier: string; accountId: string; credits: number };
  section?: Section;
  body: Html;
}

/**
 * The page: the stylesheet and the one script are the service's own files (with the HTML, three
 * requests a page); `data:,` as the icon keeps the browser from asking for /favicon.ico.
 */
export function layout(o: LayoutOptions): string {
  const nav = o.session
    ? html`<header class="top">
  <a class="brand" href="/dashboard">pvai</a>
  <nav aria-label="Dashboard">
    <ul>${NAV.map(
      (n) =>
        html`<li><a href="${n.path}"${n.section === o.section ? new Html(' aria-current="page"') : ''}>${n.label}</a></li>`,
    )}</ul>
  </nav>
  <form method="post" action="/dashboard/sign-out" class="signout">
    <span class="who">${o.session.email} <span class="tier">${o.session.tier}</span></span>
    <a href="/dashboard/password"${o.section === 'password' ? new Html(' aria-current="page"') : ''}>Password</a>
    <input type="hidden" name="_csrf" value="${o.session.csrfToken}">
    <button type="submit" class="secondary">Sign out</button>
  </form>
</header>`
    : html`<header class="top"><span class="brand">pvai</span><span class="who">Developer dashboard</span></header>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · pvai dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
<script src="/dashboard/assets/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
${nav}
<main id="main" tabindex="-1"${o.session ? '' : new Html(' class="narrow"')}>
${o.session ? creditBanner(o.session) : ''}<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>
`.text;
}

/**
 * Below this balance every page warns: ten requests of the dearest chat model (PV-ADVANCED, 5 credits each),
 * a few minutes of an app's traffic, so the warning comes before the refusals rather than with them.
 */
const LOW_CREDITS = 50;

/** The warning on every signed-in page when the balance is 0 (requests are refused) or under LOW_CREDITS. */
function creditBanner({ credits, accountId }: { credits: number; accountId: string }): Html | '' {
  if (credits >= LOW_CREDITS) return '';
  const what =
    credits <= 0
      ? html`<strong>Your account has no credits left:</strong> requests that cost credits are refused (402,
<code>INSUFFICIENT_CREDITS</code>) until credits are added.`
      : html`<strong>Your account is low on credits:</strong> ${formatNumber(credits)} left. Requests are refused
once the balance reaches 0.`;
  return html`<div class="error credit-banner" role="alert">${what} Ask whoever runs this pvai service to add credits
(<code>pvai credits add --account ${accountId} --amount N</code>); the <a href="/dashboard/usage">Usage</a> page shows what
spends them.</div>
`;
}

/** A hidden field with the session's CSRF token: every state-changing form carries one. */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

export function formatTime(ms: number | null): string {
  if (ms === null) return 'never';
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}
