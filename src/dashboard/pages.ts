import type { WindowName, WindowState } from '../limits/index.js';
import type { SlaReport, SlaWindow } from '../sla/index.js';
import type { DailyUsage } from '../usage/index.js';
import { barChart } from './charts.js';
import { userIdMarkup } from './end-user-id.js';
import { csrfField, formatNumber, formatTime, type Html, html, type LayoutOptions, layout } from './html.js';
import { PERCENTILE_MIN_REQUESTS, percentileCell, percentileShown } from './sla-percentiles.js';

export type PageSession = NonNullable<LayoutOptions['session']>;

export function signInPage(o: { csrfToken: string; email?: string; error?: string; next?: string }): string {
  return layout({
    title: 'Sign in',
    body: html`<div class="card signin">
<p class="lead">The developer dashboard of pvai: your API keys, usage and documents.</p>
${o.error ? html`<p class="error" role="alert">${o.error}</p>` : ''}
<form method="post" action="/dashboard/sign-in">
  <input type="hidden" name="_csrf" value="${o.csrfToken}">
  <div class="field"><label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${o.email ?? ''}"${o.email ? '' : html` autofocus`}></div>
  <div class="field"><label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required${o.email ? html` autofocus` : ''}></div>
  <button type="submit">Sign in</button>
</form>
</div>`,
  });
}

export function messagePage(o: { title: string; message: string; session?: PageSession }): string {
  return layout({
    title: o.title,
    ...(o.session ? { session: o.session } : {}),
    body: html`<p class="error" role="alert">${o.message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`,
  });
}

const WINDOW_LABELS: Record<WindowName, string> = {
  minute: 'This minute',
  day: 'Today (UTC)',
  month: 'This month (UTC)',
};

export function usagePage(o: {
  session: PageSession;
  balance: number;
  windows: Record<WindowName, WindowState>;
  days: readonly string[];
  rows: readonly DailyUsage[];
}): string {
  const models = [...new Set(o.rows.map((r) => r.model))].sort();
  const name = (model: string) => model || 'other (no model)';
  const perDay = (pick: (r: DailyUsage) => number) =>
    models.map((model) => ({
      name: name(model),
      values: o.days.map((day) =>
        o.rows.filter((r) => r.day === day && r.model === model).reduce((sum, r) => sum + pick(r), 0),
      ),
    }));
  const byModel = models.map((model) => {
    const rows = o.rows.filter((r) => r.model === model);
    const sum = (pick: (r: DailyUsage) => number) => rows.reduce((s, r) => s + pick(r), 0);
    return {
      model,
      requests: sum((r) => r.requests),
      credits: sum((r) => r.credits),
      tokens: sum((r) => r.promptTokens + r.completionTokens),
    };
  });
  const maxRequests = Math.max(1, ...byModel.map((m) => m.requests));
  const windows = (['minute', 'day', 'month'] as const).map((w) => {
    const state = o.windows[w];
    const used = state.limit - state.remaining;
    const share = state.limit > 0 ? Math.min(100, (used / state.limit) * 100) : 0;
    return html`<div class="stat"><div class="label">${WINDOW_LABELS[w]}</div>
<div class="value">${formatNumber(used)} <span class="sub">of ${formatNumber(state.limit)} requests</span></div>
<div class="meter" role="img" aria-label="${Math.round(share)}% used"><span style="width:${share.toFixed(1)}%"></span></div></div>`;
  });
  const range = `${o.days[0]} to ${o.days[o.days.length - 1]}`;
  const charts: Html = o.rows.length
    ? html`${barChart({ title: `Requests per day by model, ${range}`, labels: o.days, series: perDay((r) => r.requests) })}
${barChart({ title: `Credits per day by model, ${range}`, labels: o.days, series: perDay((r) => r.credits), empty: 'No credits spent in these days.' })}
${barChart({ title: `Tokens per day by model (prompt + completion), ${range}`, labels: o.days, series: perDay((r) => r.promptTokens + r.completionTokens), empty: 'No tokens in these days.' })}
<h2>Per model, ${range}</h2>
<table><thead><tr><th scope="col">Model</th><th scope="col" class="num">Requests</th><th scope="col"><span class="visually-hidden">Share of requests</span></th><th scope="col" class="num">Credits</th><th scope="col" class="num">Tokens</th></tr></thead>
<tbody>${byModel.map(
        (m) =>
          html`<tr><th scope="row">${name(m.model)}</th><td class="num">${formatNumber(m.requests)}</td><td><span class="bar" style="width:${((m.requests / maxRequests) * 10).toFixed(2)}rem"></span></td><td class="num">${formatNumber(m.credits)}</td><td class="num">${formatNumber(m.tokens)}</td></tr>`,
      )}</tbody></table>`
    : html`<p class="empty">No requests in the last ${o.days.length} days.</p>`;
  return layout({
    title: 'Usage',
    session: o.session,
    section: 'usage',
    body: html`<div class="stats">
<div class="stat"><div class="label">Credit balance</div><div class="value">${formatNumber(o.balance)}</div><div class="sub">credits</div></div>
${windows}
</div>
<h2>The last ${o.days.length} days</h2>
${charts}`,
  });
}

/** What the Documents page shows of one document (DocumentService's records have these fields and more). */
export interface DashboardDocument {
  id: string;
  title: string;
  contentType: string;
  sizeBytes: number;
  status: 'processing' | 'ready' | 'failed';
  createdAt: number;
}

/** What the Documents page shows of one memory (MemoryService's records have these fields and more). */
export interface DashboardMemoryItem {
  id: string;
  content: string;
  createdAt: number;
}

export function documentsPage(o: {
  session: PageSession;
  userId: string;
  documents: readonly DashboardDocument[] | undefined;
  memories?: readonly DashboardMemoryItem[] | undefined;
  notice?: string;
  memoryAvailable: boolean;
  /** The user's data can be exported and erased here (pages/users.ts). */
  userData?: boolean;
}): string {
  const user = encodeURIComponent(o.userId);
  const shown = userIdMarkup(o.userId);
  const userData =
    o.userId && o.userData
      ? html`<h2>All data of ${shown}</h2>
<p class="row"><a class="button secondary" href="/dashboard/users/export?user=${user}" download>Export this user's data</a>
<a class="button danger" href="/dashboard/users/erase?user=${user}">Erase this user</a></p>`
      : '';
  const memories = !o.memoryAvailable
    ? html`<p class="empty">Memory per end user is not available on this server yet.</p>`
    : !o.userId
      ? html`<p class="empty">Choose an end user to see their memories.</p>`
      : o.memories?.length
        ? html`<table><caption class="visually-hidden">Memories of ${o.userId}</caption>
<thead><tr><th scope="col">Memory</th><th scope="col">Saved</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${o.memories.map(
            (m) => html`<tr><td>${m.content}</td><td>${formatTime(m.createdAt)}</td>
<td class="actions"><form class="inline" method="post" action="/dashboard/memory/${m.id}/delete" data-confirm="Delete this memory?">
${csrfField(o.session.csrfToken)}<input type="hidden" name="user" value="${o.userId}">
<button type="submit" class="danger" aria-label="Delete memory: ${m.content.slice(0, 40)}">Delete</button></form></td></tr>`,
          )}</tbody></table>`
        : html`<p class="empty">No memories for ${shown}.</p>`;
  const list = o.documents
    ? o.documents.length
      ? html`<table><caption class="visually-hidden">Documents of ${o.userId}</caption>
<thead><tr><th scope="col">Title</th><th scope="col">Type</th><th scope="col" class="num">Size</th><th scope="col">Status</th><th scope="col">Uploaded</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${o.documents.map(
          (
            d,
          ) => html`<tr><td>${d.title}</td><td>${d.contentType}</td><td class="num">${formatNumber(d.sizeBytes)} B</td>
<td><span class="badge ${d.status === 'ready' ? 'ok' : d.status === 'failed' ? 'bad' : 'off'}">${d.status}</span></td><td>${formatTime(d.createdAt)}</td>
<td class="actions"><form class="inline" method="post" action="/dashboard/documents/${d.id}/delete" data-confirm="Delete ${d.title}?">
${csrfField(o.session.csrfToken)}<input type="hidden" name="user" value="${o.userId}">
<button type="submit" class="danger" aria-label="Delete ${d.title}">Delete</button></form></td></tr>`,
        )}</tbody></table>`
      : html`<p class="empty">No documents for ${shown}.</p>`
    : '';
  return layout({
    title: 'Documents',
    session: o.session,
    section: 'documents',
    body: html`<p class="lead">The documents your end users uploaded (per <code>user</code>), which their chats can draw on.</p>
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
<form method="get" action="/dashboard/documents" class="row card">
  <div class="field"><label for="user">End user</label>
    <input id="user" name="user" type="text" maxlength="256" required value="${o.userId}" placeholder="the user id your app sends"></div>
  <button type="submit">Show documents</button>
</form>
${o.userId ? html`<h2>Documents of ${shown}</h2>${list}` : ''}
<h2>Memory</h2>
${memories}
${userData}`,
  });
}

export const SLA_WINDOWS: readonly SlaWindow[] = ['1h', '24h', '7d', '30d'];
const WINDOW_NAMES: Record<SlaWindow, string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

const percent = (x: number) => `${Number((x * 100).toFixed(2))}%`;
const millis = (x: number) => `${formatNumber(Math.round(x))} ms`;

export function slaPage(o: { session: PageSession; report?: SlaReport; window: SlaWindow }): string {
  const windows = html`<nav aria-label="SLA window" class="row windows">${SLA_WINDOWS.map((w) =>
    w === o.window
      ? html`<a href="/dashboard/sla?window=${w}" aria-current="page" class="button">${WINDOW_NAMES[w]}</a>`
      : html`<a href="/dashboard/sla?window=${w}" class="button secondary">${WINDOW_NAMES[w]}</a>`,
  )}</nav>`;
  let body: Html;
  if (!o.report) {
    body = html`<p class="notice">SLA monitoring is not part of the ${o.session.tier} tier. It comes with the
startup, business and enterprise tiers.</p>`;
  } else if (o.report.models.length === 0) {
    body = html`${windows}<p class="empty">No requests to a model in this window.</p>`;
  } else {
    const models = o.report.models;
    const labels = models.map((m) => m.model);
    const target = models[0];
    const lowest = Math.min(...models.map((m) => m.availability), target?.availabilityTarget ?? 1);
    // The axis starts just under the lowest value: 99.9% against 99.5% must not look like two full bars.
    const min = Math.max(0, lowest - (1 - lowest) * 0.5 - 0.001);
    const measured = models.filter((m) => percentileShown('p95', m.requests));
    body = html`${windows}
<p class="lead">${WINDOW_NAMES[o.window]}: ${new Date(o.report.start).toISOString().slice(0, 16).replace('T', ' ')} to
${new Date(o.report.end).toISOString().slice(0, 16).replace('T', ' ')} UTC, your ${o.report.tier} tier's targets.</p>
${barChart({
  title: `Availability per model, ${WINDOW_NAMES[o.window].toLowerCase()}`,
  labels,
  series: [{ name: 'availability', values: models.map((m) => m.availability) }],
  target: { value: target?.availabilityTarget ?? 1, label: `target ${percent(target?.availabilityTarget ?? 1)}` },
  format: percent,
  labelHeading: 'Model',
  min,
  max: 1,
  integers: false,
})}
${
  measured.length
    ? barChart({
        title: `Latency p95 per model (bucket estimate), ${WINDOW_NAMES[o.window].toLowerCase()}`,
        labels: measured.map((m) => m.model),
        series: [{ name: 'p95 latency', values: measured.map((m) => m.latencyMs.p95) }],
        target: { value: target?.latencyTargetMs ?? 0, label: `target p95 ${millis(target?.latencyTargetMs ?? 0)}` },
        format: millis,
        labelHeading: 'Model',
      })
    : html`<p class="empty">Latency p95 is shown for a model once it has ${PERCENTILE_MIN_REQUESTS.p95} requests in the window.</p>`
}
<h2>Per model</h2>
<table><thead><tr><th scope="col">Model</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Errors</th>
<th scope="col" class="num">Availability</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th><th scope="col" class="num">p99</th><th scope="col">Target</th></tr></thead>
<tbody>${models.map(
      (
        m,
      ) => html`<tr><th scope="row">${m.model}</th><td class="num">${formatNumber(m.requests)}</td><td class="num">${formatNumber(m.errors)}</td>
<td class="num">${percent(m.availability)}</td>${percentileCell('p50', m.requests, m.latencyMs.p50)}${percentileCell('p95', m.requests, m.latencyMs.p95)}${percentileCell('p99', m.requests, m.latencyMs.p99)}
<td>${m.meetsTarget ? html`<span class="badge ok">met</span>` : html`<span class="badge bad">missed</span>`}</td></tr>`,
    )}</tbody></table>
<p class="sub">Percentiles are estimated from latency buckets (≈, within a bucket's width) and shown once a model has ${PERCENTILE_MIN_REQUESTS.p50}, ${PERCENTILE_MIN_REQUESTS.p95} and ${PERCENTILE_MIN_REQUESTS.p99} requests in the window (p50, p95, p99); — until then.</p>`;
  }
  return layout({ title: 'SLA', session: o.session, section: 'sla', body });
}
