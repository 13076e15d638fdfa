import type { ApiKeyRecord } from '../accounts/index.js';
import { EMBEDDING_MODEL_ID, MODEL_IDS } from '../kernel/index.js';
import { csrfField, formatNumber, formatTime, type Html, html, layout } from './html.js';
import type { PageSession } from './pages.js';

const MODEL_CHOICES: readonly string[] = [...MODEL_IDS, EMBEDDING_MODEL_ID];

const day = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? '' : new Date(ms).toISOString().slice(0, 10);

/** The fields of a key's limits, empty or as the key has them: the create form's and each edit form's. */
function limitFields(id: string, k?: ApiKeyRecord): Html {
  const budget = k?.budget;
  const models = k?.models ?? [];
  const metadata = Object.entries(k?.metadata ?? {})
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
  return html`<div class="field"><label for="${id}-budget">Credit budget</label>
  <input id="${id}-budget" name="budget" type="number" min="0" inputmode="numeric" value="${budget ? String(budget.credits) : ''}" placeholder="none"></div>
<div class="field"><label for="${id}-period">Budget period</label>
  <select id="${id}-period" name="budget_period"><option value="month"${budget?.period === 'total' ? '' : html` selected`}>per UTC month</option><option value="total"${budget?.period === 'total' ? html` selected` : ''}>in total</option></select></div>
<div class="field"><label for="${id}-rpm">Requests per minute</label>
  <input id="${id}-rpm" name="rpm" type="number" min="1" value="${k?.rateLimits?.rpm ? String(k.rateLimits.rpm) : ''}" placeholder="tier's"></div>
<div class="field"><label for="${id}-rpd">Requests per day</label>
  <input id="${id}-rpd" name="rpd" type="number" min="1" value="${k?.rateLimits?.rpd ? String(k.rateLimits.rpd) : ''}" placeholder="tier's"></div>
<div class="field"><label for="${id}-expires">Expires after (UTC day)</label>
  <input id="${id}-expires" name="expires" type="date" value="${day(k?.expiresAt)}"></div>
<fieldset class="field"><legend>Models (none ticked: every model of the tier)</legend>${MODEL_CHOICES.map(
    (m) =>
      html`<label class="choice"><input type="checkbox" name="models" value="${m}"${models.includes(m) ? html` checked` : ''}> ${m}</label>`,
  )}</fieldset>
<div class="field"><label for="${id}-metadata">Metadata (key=value, one a line)</label>
  <textarea id="${id}-metadata" name="metadata" rows="2">${metadata}</textarea></div>`;
}

function limitsSummary(k: ApiKeyRecord): Html {
  const parts: Html[] = [];
  if (k.budget) {
    const span = k.budget.period === 'month' ? 'this month' : 'in total';
    parts.push(html`${formatNumber(k.spend?.credits ?? 0)} of ${formatNumber(k.budget.credits)} credits ${span}`);
  }
  if (k.rateLimits) parts.push(html`${k.rateLimits.rpm ?? '–'}/min, ${k.rateLimits.rpd ?? '–'}/day`);
  if (k.models) parts.push(html`${k.models.join(', ')}`);
  if (k.expiresAt) parts.push(html`expires ${formatTime(k.expiresAt)}`);
  return parts.length
    ? html`${parts.map((p, i) => html`${i ? html`<br>` : ''}${p}`)}`
    : html`<span class="empty">none</span>`;
}

export function keysPage(o: {
  session: PageSession;
  keys: readonly ApiKeyRecord[];
  tier: string;
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
  const label = (k: ApiKeyRecord) => k.name ?? k.prefix;
  const row = (k: ApiKeyRecord) => html`<tr${k.revokedAt !== null ? html` class="revoked"` : ''}>
<td data-label="Name">${k.name ?? html`<span class="empty">unnamed</span>`} <code>${k.prefix}…</code></td>
<td data-label="Status">${k.revokedAt === null ? html`<span class="badge ok">active</span>` : html`<span class="badge off">revoked ${formatTime(k.revokedAt)}</span>`}</td>
<td data-label="Limits">${limitsSummary(k)}</td>
<td data-label="Last used">${formatTime(k.lastUsedAt)}</td>
<td class="actions">${
    k.revokedAt === null
      ? html`<form class="inline" method="post" action="/dashboard/keys/${k.id}/rotate" data-confirm="Rotate ${label(k)}? The old key stops working at once.">
${csrfField(o.session.csrfToken)}<button type="submit" class="secondary" aria-label="Rotate ${label(k)}">Rotate</button></form><form class="inline" method="post" action="/dashboard/keys/${k.id}/revoke" data-confirm="Revoke ${label(k)}? It stops working at once.">
${csrfField(o.session.csrfToken)}<button type="submit" class="danger" aria-label="Revoke ${label(k)}">Revoke</button></form>
<details class="edit"><summary aria-label="Edit ${label(k)}">Edit</summary>
<form method="post" action="/dashboard/keys/${k.id}/edit" class="row">${csrfField(o.session.csrfToken)}
<div class="field"><label for="${k.id}-name">Rename to</label><input id="${k.id}-name" name="name" type="text" maxlength="128" value="${k.name ?? ''}"></div>
${limitFields(k.id, k)}<button type="submit">Save ${label(k)}</button></form></details>`
      : ''
  }</td>
</tr>`;
  const table = (keys: readonly ApiKeyRecord[], caption: string) => html`<table class="stack">
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Limits</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
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
    <input id="key-name" name="name" type="text" maxlength="128" required placeholder="e.g. production server"></div>
  <details class="limits"><summary>Budget, limits, models, expiry (optional; rate limits at most the ${o.tier} tier's)</summary>
  <div class="row">${limitFields('new')}</div></details>
  <button type="submit">Create key</button>
</form>
</section>
<h2>Active keys</h2>
${active.length ? table(active, 'Active keys') : html`<p class="empty">No active keys.</p>`}
${revoked.length ? html`<h2>Revoked keys</h2>${table(revoked, 'Revoked keys')}` : ''}`,
  });
}
