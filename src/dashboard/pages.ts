import type { ApiKeyRecord } from '../accounts/index.js';
import type { SlaReport, SlaWindow } from '../sla/index.js';
import { barChart } from './charts.js';
import { userIdMarkup } from './end-user-id.js';
import { endUserPicker, noSuchEndUser } from './end-user-markup.js';
import { csrfField, formatNumber, formatTime, type Html, html, type LayoutOptions, layout } from './html.js';

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

export function keysPage(o: {
  session: PageSession;
  keys: readonly ApiKeyRecord[];
  created?: { secret: string; key: ApiKeyRecord; rotatedFrom?: string };
  notice?: string;
}): string {
  const active = o.keys.filter((k) => k.revokedAt === null);
  const revoked = o.keys.filter((k) => k.revokedAt !== null);
  const created = o.created
    ? html`<section class="notice" aria-labelledby="new-key-title" tabindex="-1" id="new-key">
<h2 id="new-key-title" style="margin-top:0">${o.created.rotatedFrom ? 'Key rotated' : 'Key created'}: ${o.created.key.name ?? 'unnamed'}</h2>
<p>Copy it now: this is the only time the whole key is shown. ${o.created.rotatedFrom ? html`The old key <code>${o.created.rotatedFrom}</code> no longer works.` : ''}</p>
<div class="secret"><code id="new-key-secret">${o.created.secret}</code>
<button type="button" class="secondary" data-copy="new-key-secret" hidden>Copy key</button>
<span id="new-key-secret-status" role="status"></span></div>
</section>`
    : '';
  const row = (k: ApiKeyRecord) => html`<tr${k.revokedAt !== null ? html` class="revoked"` : ''}>
<td><code>${k.prefix}…</code></td>
<td>${k.name ?? html`<span class="empty">unnamed</span>`}</td>
<td>${formatTime(k.createdAt)}</td>
<td>${formatTime(k.lastUsedAt)}</td>
<td>${k.revokedAt === null ? html`<span class="badge ok">active</span>` : html`<span class="badge off">revoked ${formatTime(k.revokedAt)}</span>`}</td>
<td class="actions">${
    k.revokedAt === null
      ? html`<form class="inline" method="post" action="/dashboard/keys/${k.id}/rotate" data-confirm="Rotate ${k.name ?? k.prefix}? The old key stops working at once.">
${csrfField(o.session.csrfToken)}<button type="submit" class="secondary" aria-label="Rotate ${k.name ?? k.prefix}">Rotate</button></form><form class="inline" method="post" action="/dashboard/keys/${k.id}/revoke" data-confirm="Revoke ${k.name ?? k.prefix}? It stops working at once.">
${csrfField(o.session.csrfToken)}<button type="submit" class="danger" aria-label="Revoke ${k.name ?? k.prefix}">Revoke</button></form>`
      : ''
  }</td>
</tr>`;
  const table = (keys: readonly ApiKeyRecord[], caption: string) => html`<table>
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Prefix</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${keys.map(row)}</tbody></table>`;
  return layout({
    title: 'API keys',
    session: o.session,
    section: 'keys',
    body: html`${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}${created}
<section aria-labelledby="create-title" class="card">
<h2 id="create-title" style="margin-top:0">Create a key</h2>
<form method="post" action="/dashboard/keys" class="row">
  ${csrfField(o.session.csrfToken)}
  <div class="field"><label for="key-name">Key name</label>
    <input id="key-name" name="name" type="text" maxlength="100" required placeholder="e.g. production server"></div>
  <button type="submit">Create key</button>
</form>
</section>
<h2>Active keys</h2>
${active.length ? table(active, 'Active keys') : html`<p class="empty">No active keys.</p>`}
${revoked.length ? html`<h2>Revoked keys</h2>${table(revoked, 'Revoked keys')}` : ''}`,
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
${barChart({
  title: `Latency p95 per model, ${WINDOW_NAMES[o.window].toLowerCase()}`,
  labels,
  series: [{ name: 'p95 latency', values: models.map((m) => m.latencyMs.p95) }],
  target: { value: target?.latencyTargetMs ?? 0, label: `target p95 ${millis(target?.latencyTargetMs ?? 0)}` },
  format: millis,
  labelHeading: 'Model',
})}
<h2>Per model</h2>
<table><thead><tr><th scope="col">Model</th><th scope="col" class="num">Requests</th><th scope="col" class="num">Errors</th>
<th scope="col" class="num">Availability</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th><th scope="col" class="num">p99</th><th scope="col">Target</th></tr></thead>
<tbody>${models.map(
      (
        m,
      ) => html`<tr><th scope="row">${m.model}</th><td class="num">${formatNumber(m.requests)}</td><td class="num">${formatNumber(m.errors)}</td>
<td class="num">${percent(m.availability)}</td><td class="num">${millis(m.latencyMs.p50)}</td><td class="num">${millis(m.latencyMs.p95)}</td><td class="num">${millis(m.latencyMs.p99)}</td>
<td>${m.meetsTarget ? html`<span class="badge ok">met</span>` : html`<span class="badge bad">missed</span>`}</td></tr>`,
    )}</tbody></table>`;
  }
  return layout({ title: 'SLA', session: o.session, section: 'sla', body });
}
