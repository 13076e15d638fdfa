import type { WindowName, WindowState } from '../limits/index.js';
import type { DailyUsage, SeriesItem } from '../usage/index.js';
import { barChart } from './charts.js';
import { userIdMarkup } from './end-user-id.js';
import { formatNumber, type Html, html, layout } from './html.js';
import type { PageSession } from './pages.js';

const WINDOW_LABELS: Record<WindowName, string> = {
  minute: 'This minute',
  day: 'Today (UTC)',
  month: 'This month (UTC)',
};

/** The range picker's presets, in days ending today. */
export const PRESET_DAYS = [7, 30, 90] as const;

/** One breakdown of the period (by model, key or end user): a page of its groups, and whether more follow. */
export interface Breakdown {
  groupBy: 'model' | 'key' | 'user';
  items: readonly SeriesItem[];
  hasMore: boolean;
}

const BREAKDOWN_TITLES = { model: 'By model', key: 'By API key', user: 'By end user' } as const;
const GROUP_HEADINGS = { model: 'Model', key: 'API key', user: 'End user' } as const;

/** The range as a query (`start`, `end`: UTC days, both included). */
const rangeQuery = (days: readonly string[]) => `start=${days[0] ?? ''}&end=${days[days.length - 1] ?? ''}`;

function groupName(b: Breakdown['groupBy'], item: SeriesItem): Html | string {
  if (b === 'model') return item.key ?? 'other (no model)';
  if (b === 'key') {
    if (item.key === null) return html`<span class="empty">no key</span>`;
    return html`${item.key_name ?? 'unnamed'} <code>${item.key_prefix ?? item.key}…</code>`;
  }
  if (item.key === null) return html`<span class="empty">no end user (or erased)</span>`;
  return html`<a href="/dashboard/documents?user=${encodeURIComponent(item.key)}">${userIdMarkup(item.key)}</a>`;
}

function breakdownTable(b: Breakdown, days: readonly string[]): Html {
  const title = BREAKDOWN_TITLES[b.groupBy];
  const csv = html`<a class="button secondary" href="/dashboard/usage.csv?group_by=${b.groupBy}&${rangeQuery(days)}" download>Download CSV</a>`;
  if (b.items.length === 0) {
    return html`<section aria-labelledby="by-${b.groupBy}"><h2 id="by-${b.groupBy}">${title}</h2><p class="empty">No requests in this range.</p></section>`;
  }
  const most = Math.max(1, ...b.items.map((i) => i.requests));
  return html`<section aria-labelledby="by-${b.groupBy}"><h2 id="by-${b.groupBy}">${title}</h2>
<p class="row">${csv}${b.hasMore ? html` <span class="sub">The ${b.items.length} first shown; the CSV has every one.</span>` : ''}</p>
<table><caption class="visually-hidden">Usage ${title.toLowerCase()}</caption>
<thead><tr><th scope="col">${GROUP_HEADINGS[b.groupBy]}</th><th scope="col" class="num">Requests</th><th scope="col"><span class="visually-hidden">Share of requests</span></th><th scope="col" class="num">Credits</th><th scope="col" class="num">Tokens</th></tr></thead>
<tbody>${b.items.map(
    (i) =>
      html`<tr><th scope="row">${groupName(b.groupBy, i)}</th><td class="num">${formatNumber(i.requests)}</td><td><span class="bar" style="width:${((i.requests / most) * 10).toFixed(2)}rem"></span></td><td class="num">${formatNumber(i.credits)}</td><td class="num">${formatNumber(i.total_tokens)}</td></tr>`,
  )}</tbody></table></section>`;
}

/** The range picker: a GET form of two dates, and the presets as links. */
function rangePicker(days: readonly string[], preset: number | undefined): Html {
  return html`<form method="get" action="/dashboard/usage" class="row card" aria-label="Date range">
  <div class="field"><label for="start">From</label><input id="start" name="start" type="date" required value="${days[0]}"></div>
  <div class="field"><label for="end">To (included)</label><input id="end" name="end" type="date" required value="${days[days.length - 1]}"></div>
  <button type="submit">Show</button>
  <nav aria-label="Preset ranges" class="row windows">${PRESET_DAYS.map((n) =>
    n === preset
      ? html`<a href="/dashboard/usage?days=${n}" aria-current="page" class="button">Last ${n} days</a>`
      : html`<a href="/dashboard/usage?days=${n}" class="button secondary">Last ${n} days</a>`,
  )}</nav>
</form>`;
}

export function usagePage(o: {
  session: PageSession;
  balance: number;
  windows: Record<WindowName, WindowState>;
  /** The range's UTC days, oldest first. */
  days: readonly string[];
  /** The preset the range is, if it is one. */
  preset?: number | undefined;
  rows: readonly DailyUsage[];
  breakdowns: readonly Breakdown[];
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
  const windows = (['minute', 'day', 'month'] as const).map((w) => {
    const state = o.windows[w];
    const used = state.limit - state.remaining;
    const share = state.limit > 0 ? Math.min(100, (used / state.limit) * 100) : 0;
    return html`<div class="stat"><div class="label">${WINDOW_LABELS[w]}</div>
<div class="value">${formatNumber(used)} <span class="sub">of ${formatNumber(state.limit)} requests</span></div>
<div class="meter" role="img" aria-label="${Math.round(share)}% used"><span style="width:${share.toFixed(1)}%"></span></div></div>`;
  });
  const range = `${o.days[0]} to ${o.days[o.days.length - 1]}`;
  const byDay = html`<a class="button secondary" href="/dashboard/usage.csv?group_by=day&${rangeQuery(o.days)}" download>Download CSV</a>`;
  const charts: Html = o.rows.length
    ? html`<p class="row">${byDay}</p>
${barChart({ title: `Requests per day by model, ${range}`, labels: o.days, series: perDay((r) => r.requests) })}
${barChart({ title: `Credits per day by model, ${range}`, labels: o.days, series: perDay((r) => r.credits), empty: 'No credits spent in these days.' })}
${barChart({ title: `Tokens per day by model (prompt + completion), ${range}`, labels: o.days, series: perDay((r) => r.promptTokens + r.completionTokens), empty: 'No tokens in these days.' })}
${o.breakdowns.map((b) => breakdownTable(b, o.days))}`
    : html`<p class="empty">No requests from ${range}.</p>`;
  return layout({
    title: 'Usage',
    session: o.session,
    section: 'usage',
    body: html`<div class="stats">
<div class="stat"><div class="label">Credit balance</div><div class="value">${formatNumber(o.balance)}</div><div class="sub">credits</div></div>
${windows}
</div>
${rangePicker(o.days, o.preset)}
<h2>${range} (UTC)</h2>
${charts}`,
  });
}
