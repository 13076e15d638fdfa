import type { SlaReport, SlaWindow } from '../sla/index.js';
import { barChart } from './charts.js';
import { userIdMarkup } from './end-user-id.js';
import { endUserPicker, noSuchEndUser } from './end-user-markup.js';
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
  /** Undefined: no user chosen, or no such user (`known`). */
  documents: readonly DashboardDocument[] | undefined;
  /** The account holds something of `userId` (an unknown id offers nothing to act on). */
  known: boolean;
  notice?: string;
  /** The user's data can be exported and erased here (pages/users.ts). */
  userData?: boolean;
  /** Files can be uploaded here (pages/documents.ts). */
  upload?: boolean;
}): string {
  const user = encodeURIComponent(o.userId);
  const upload = o.upload
    ? html`<form method="post" action="/dashboard/documents/upload" enctype="multipart/form-data" class="row card">
${csrfField(o.session.csrfToken)}<input type="hidden" name="user" value="${o.userId}">
<div class="field"><label for="file">File (txt, md, html, pdf or docx)</label>
  <input id="file" name="file" type="file" required accept=".txt,.md,.markdown,.html,.htm,.pdf,.docx"></div>
<div class="field"><label for="title">Title (optional)</label><input id="title" name="title" type="text" maxlength="512"></div>
<button type="submit">Upload</button>
</form>`
    : '';
  const shown = userIdMarkup(o.userId);
  const userData =
    o.userId && o.known && o.userData
      ? html`<h2>All data of ${shown}</h2>
<p class="row"><a class="button secondary" href="/dashboard/users/export?user=${user}" download>Export this user's data</a>
<a class="button danger" href="/dashboard/users/erase?user=${user}">Erase this user</a></p>`
      : '';
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
  const body = !o.userId
    ? ''
    : !o.known
      ? noSuchEndUser(o.userId)
      : html`<h2>Documents of ${shown}</h2>${upload}${list}
<p><a href="/dashboard/memory?user=${user}">Their memories</a></p>${userData}`;
  return layout({
    title: 'Documents',
    session: o.session,
    section: 'documents',
    body: html`<p class="lead">The documents your end users uploaded (per <code>user</code>), which their chats can draw on.</p>
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
${endUserPicker('documents', o.userId)}
${body}`,
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
