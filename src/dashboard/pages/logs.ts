import type { ApiKeyRecord } from '../../accounts/index.js';
import type { LogCursor, RequestLogFilter, RequestLogRow } from '../../logs/index.js';
import { logId, parseLogId } from '../../logs/index.js';
import { type DashboardRouter, formOf, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { endUserIdOf, userIdMarkup } from '../end-user-id.js';
import { csrfField, formatNumber, type Html, html, layout } from '../html.js';
import type { PageSession } from '../pages.js';
import { DASHBOARD_PATH, seeOther, send } from '../web.js';

const PAGE_ROWS = 50;
/** The status choices of the filter: every status, failures only, or one status. */
const STATUSES = ['200', '400', '401', '402', '403', '404', '408', '413', '429', '499', '500', '502', '503', '504'];

interface Filters {
  keyId?: string;
  userId?: string;
  /** `errors`, a status, or absent (all). */
  status?: string;
}

/** The filters of the page's query, those that name nothing valid left out (the page then shows all). */
function filtersOf(query: Record<string, unknown>, keys: readonly ApiKeyRecord[]): Filters {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const keyId = text(query.key);
  const status = text(query.status);
  return {
    ...(keyId && keys.some((k) => k.id === keyId) ? { keyId } : {}),
    ...(endUserIdOf(query.user) !== undefined ? { userId: endUserIdOf(query.user) as string } : {}),
    ...(status === 'errors' || (status && STATUSES.includes(status)) ? { status } : {}),
  };
}

function storeFilter(f: Filters): RequestLogFilter {
  return {
    keyId: f.keyId,
    userId: f.userId,
    ...(f.status === 'errors' ? { errorsOnly: true } : f.status ? { status: Number(f.status) } : {}),
  };
}

/** The page's link with these filters (and a cursor). */
function linkOf(f: Filters, after?: string): string {
  const q = new URLSearchParams();
  if (f.keyId) q.set('key', f.keyId);
  if (f.userId !== undefined) q.set('user', f.userId);
  if (f.status) q.set('status', f.status);
  if (after) q.set('after', after);
  const query = q.toString();
  return `${DASHBOARD_PATH}/logs${query ? `?${query}` : ''}`;
}

/**
 * Logs: the account's request logs, newest first, 50 a page (the next after the last shown), filtered by key,
 * end user and status; and the switch of content logging (the input and answer text of chat and responses).
 */
export function logsRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'accounts' | 'logs'>): void {
  const logs = deps.logs;
  if (!logs) return;
  router.get('/logs', async (ctx) => {
    const signed = signedIn(ctx);
    const accountId = signed.account.id;
    const [keys, account] = await Promise.all([
      deps.accounts.listKeys(accountId),
      deps.accounts.requireAccount(accountId),
    ]);
    const filters = filtersOf(ctx.query, keys);
    await logs.flush();
    const afterId = typeof ctx.query.after === 'string' ? parseLogId(ctx.query.after) : undefined;
    const cursor: LogCursor | undefined =
      afterId === undefined ? undefined : await logs.store.cursorOf(accountId, afterId);
    const rows = await logs.store.list(accountId, storeFilter(filters), cursor, PAGE_ROWS + 1);
    const notice =
      ctx.query.content === 'on'
        ? 'Content logging is on: new requests keep their text.'
        : ctx.query.content === 'off'
          ? 'Content logging is off: new requests keep no text.'
          : undefined;
    send(
      ctx,
      200,
      logsPage({
        session: signed.page,
        keys,
        filters,
        rows: rows.slice(0, PAGE_ROWS),
        more: rows.length > PAGE_ROWS,
        paged: cursor !== undefined,
        logContent: account.logContent === true,
        ...(notice ? { notice } : {}),
      }),
    );
  });

  // Post/Redirect/Get: a reload after the switch asks for nothing again.
  router.post('/logs/content', async (ctx) => {
    const on = formOf(ctx).get('log_content') === 'on';
    await deps.accounts.setLogContent(signedIn(ctx).account.id, on);
    seeOther(ctx, `${DASHBOARD_PATH}/logs?content=${on ? 'on' : 'off'}`);
  });
}

function statusBadge(r: RequestLogRow): Html {
  const failed = r.status >= 400 || r.failedStatus !== null;
  const label = r.failedStatus === null ? String(r.status) : `${r.status} → ${r.failedStatus}`;
  return html`<span class="badge ${failed ? 'bad' : 'ok'}">${label}</span>`;
}

function logRow(r: RequestLogRow): Html {
  const key = r.keyId === null ? html`<span class="empty">none</span>` : html`<code>${r.keyPrefix ?? r.keyId}…</code>`;
  const text = r.content
    ? html`<details><summary>text</summary><p>Input${r.content.truncated ? ' (cut at 32 KiB)' : ''}:</p><pre>${r.content.input ?? ''}</pre><p>Answer:</p><pre>${r.content.output ?? ''}</pre></details>`
    : '';
  return html`<tr id="${logId(r.id)}">
<td><time datetime="${new Date(r.createdAt).toISOString()}">${new Date(r.createdAt).toISOString().slice(0, 19).replace('T', ' ')}</time></td>
<td>${statusBadge(r)}</td>
<td>${r.endpoint}${r.errorCode ? html`<br><code class="error-code">${r.errorCode}</code>` : ''}</td>
<td>${r.model ?? html`<span class="empty">–</span>`}${r.cached ? html` <span class="badge ok">cached</span>` : ''}</td>
<td>${key}${r.keyName ? html` ${r.keyName}` : ''}</td>
<td>${r.userId === null ? html`<span class="empty">–</span>` : userIdMarkup(r.userId)}</td>
<td class="num">${formatNumber(r.promptTokens)} / ${formatNumber(r.completionTokens)}</td>
<td class="num">${formatNumber(r.credits)}</td>
<td class="num">${formatNumber(r.latencyMs)} ms</td>
<td>${text}</td>
</tr>`;
}

function logsPage(o: {
  session: PageSession;
  keys: readonly ApiKeyRecord[];
  filters: Filters;
  rows: readonly RequestLogRow[];
  more: boolean;
  paged: boolean;
  logContent: boolean;
  notice?: string;
}): string {
  const f = o.filters;
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  const filterForm = html`<form method="get" action="${DASHBOARD_PATH}/logs" class="row filters" aria-label="Filter the logs">
<div class="field"><label for="log-key">Key</label>
<select id="log-key" name="key">${option('', 'All keys', !f.keyId)}${o.keys.map((k) =>
    option(k.id, `${k.name ?? 'unnamed'} (${k.prefix}…)`, f.keyId === k.id),
  )}</select></div>
<div class="field"><label for="log-user">End user</label>
<input id="log-user" name="user" type="text" value="${f.userId ?? ''}" placeholder="any"></div>
<div class="field"><label for="log-status">Status</label>
<select id="log-status" name="status">${option('', 'All', !f.status)}${option('errors', 'Errors only', f.status === 'errors')}${STATUSES.map(
    (s) => option(s, s, f.status === s),
  )}</select></div>
<button type="submit">Filter</button>
</form>`;
  const last = o.rows.at(-1);
  const pager = html`<nav class="pager" aria-label="Pages">${o.paged ? html`<a href="${linkOf(f)}">Newest</a>` : ''}${
    o.more && last ? html` <a href="${linkOf(f, logId(last.id))}" rel="next">Older</a>` : ''
  }</nav>`;
  const table = o.rows.length
    ? html`<div class="table-scroll" tabindex="0" role="region" aria-label="Request logs"><table class="logs">
<caption class="visually-hidden">Request logs, newest first</caption>
<thead><tr><th scope="col">Time (UTC)</th><th scope="col">Status</th><th scope="col">Endpoint</th><th scope="col">Model</th><th scope="col">Key</th><th scope="col">End user</th><th scope="col">Tokens in / out</th><th scope="col">Credits</th><th scope="col">Latency</th><th scope="col"><span class="visually-hidden">Text</span></th></tr></thead>
<tbody>${o.rows.map(logRow)}</tbody></table></div>`
    : html`<p class="empty">No requests ${f.keyId || f.userId !== undefined || f.status ? 'match these filters' : 'yet'}.</p>`;
  const content = html`<section class="card" aria-labelledby="content-title">
<h2 id="content-title" style="margin-top:0">Content logging</h2>
<p>${o.logContent ? 'On: new chat and responses requests keep their input and answer text (32 KiB each), shown here and in the end user’s export.' : 'Off: the logs keep no prompt or answer text.'}</p>
<form method="post" action="${DASHBOARD_PATH}/logs/content" class="inline">
${csrfField(o.session.csrfToken)}<input type="hidden" name="log_content" value="${o.logContent ? 'off' : 'on'}">
<button type="submit" class="${o.logContent ? 'secondary' : ''}">${o.logContent ? 'Turn content logging off' : 'Turn content logging on'}</button>
</form></section>`;
  return layout({
    title: 'Logs',
    session: o.session,
    section: 'logs',
    body: html`${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}${content}
${filterForm}
${table}
${pager}`,
  });
}
