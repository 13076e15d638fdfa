import { formatNumber, type Html, html } from './html.js';

/** Server-rendered SVG charts: no script, no library, readable without colour (a table follows each). */

interface Series {
  name: string;
  values: readonly number[];
}

export interface BarChartOptions {
  /** Says what the chart shows; the SVG's accessible name. */
  title: string;
  /** One label per bar (e.g. days). */
  labels: readonly string[];
  /** Stacked in order; one value per label each. */
  series: readonly Series[];
  /** A line across the chart (a target), with its label. */
  target?: { value: number; label: string };
  /** Formats a value for the axis and the tooltips. */
  format?: (n: number) => string;
  /** The lowest value of the axis (default 0; rounded down to a tick). */
  min?: number;
  /** The highest value the axis may reach (1 for a share). */
  max?: number;
  /** Whole numbers only (counts): no fractional ticks. Default true. */
  integers?: boolean;
  /** The heading of the labels' column in the table of numbers (default "Day"). */
  labelHeading?: string;
  /** Shown instead of an empty chart when every value is 0. */
  empty?: string;
}

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { top: 16, right: 12, bottom: 28, left: 76 };
/** Between the plot's right edge and a target's label. */
const LABEL_GAP = 6;

/** The width an axis label of 11 px takes, at most (system-ui's widest digits and letters are under 6.5 px). */
function labelWidth(text: string): number {
  return Math.ceil(text.length * 6.5);
}

/** A step of 1, 2 or 5 × 10^n giving about four ticks up to max. */
function niceMax(max: number, integers: boolean): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: integers ? 1 : 0.25 };
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  // Counts have no fractional ticks: an axis of 0 to 3 requests reads 0, 1, 2, 3.
  const step = integers ? Math.max(1, nice) : nice;
  return { top: Math.ceil(max / step) * step, step };
}

/** A stacked bar chart with its data as a table below (for screen readers and exact values). */
export function barChart(o: BarChartOptions): Html {
  const format = o.format ?? formatNumber;
  const min = o.min ?? 0;
  const totals = o.labels.map((_, i) => o.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  if (o.empty && totals.every((t) => t === 0)) {
    return html`<figure class="chart"><figcaption>${o.title}</figcaption><p class="empty">${o.empty}</p></figure>`;
  }
  const highest = Math.max(...totals);
  // A target far above the data (a 15 s latency target over 40 ms answers) would flatten every bar: it is
  // then named above the chart instead of drawn.
  const targetOnScale = o.target !== undefined && !(highest > 0 && o.target.value > 3 * highest);
  const scaleMax = Math.max(highest, targetOnScale ? (o.target?.value ?? 0) : 0, min);
  const { step } = niceMax(scaleMax - min, o.integers ?? true);
  const low = Math.floor(min / step + 1e-9) * step;
  const high = Math.min(
    o.max ?? Number.POSITIVE_INFINITY,
    Math.max(low + step, Math.ceil(scaleMax / step - 1e-9) * step),
  );
  const span = high - low || 1;
  // A drawn target's label sits right of the plot, level with its line: never over a bar, whatever their heights.
  const right = o.target && targetOnScale ? Math.max(PAD.right, labelWidth(o.target.label) + 2 * LABEL_GAP) : PAD.right;
  const plotW = WIDTH - PAD.left - right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const y = (v: number) => PAD.top + plotH - ((Math.min(high, Math.max(low, v)) - low) / span) * plotH;
  const slot = plotW / Math.max(1, o.labels.length);
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const ticks: Html[] = [];
  for (let v = low; v <= high + step / 2; v += step) {
    const tick = Math.min(v, high);
    const ty = y(tick);
    ticks.push(
      html`<line class="grid" x1="${PAD.left}" x2="${WIDTH - right}" y1="${ty}" y2="${ty}"/><text class="axis" x="${PAD.left - 6}" y="${ty + 4}" text-anchor="end">${format(tick)}</text>`,
    );
  }
  const bars: Html[] = [];
  o.labels.forEach((label, i) => {
    let base = 0;
    const x = PAD.left + slot * i + (slot - barW) / 2;
    o.series.forEach((s, k) => {
      const v = s.values[i] ?? 0;
      if (v <= 0) return;
      const y0 = y(base);
      const y1 = y(base + v);
      base += v;
      bars.push(
        html`<rect class="c${k % 6}" x="${x.toFixed(1)}" y="${y1.toFixed(1)}" width="${barW.toFixed(1)}" height="${Math.max(1, y0 - y1).toFixed(1)}"><title>${label} · ${s.name}: ${format(v)}</title></rect>`,
      );
    });
  });
  // At most ~8 labels under the axis, always the first and the last.
  const every = Math.max(1, Math.ceil(o.labels.length / 8));
  const last = o.labels.length - 1;
  // The last label always; a regular one only when it is not right beside the last.
  const labelled = (i: number) => i === last || (i % every === 0 && (every === 1 || last - i >= every / 2 + 1));
  const xLabels = o.labels.map((label, i) =>
    labelled(i)
      ? html`<text class="axis" x="${(PAD.left + slot * i + slot / 2).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="middle">${shortLabel(label)}</text>`
      : '',
  );
  const target =
    o.target && targetOnScale
      ? html`<line class="target" x1="${PAD.left}" x2="${WIDTH - right}" y1="${y(o.target.value)}" y2="${y(o.target.value)}"/><text class="target-label" x="${WIDTH - right + LABEL_GAP}" y="${y(o.target.value) + 4}" text-anchor="start">${o.target.label}</text>`
      : '';
  const legend =
    o.series.length > 1 || o.target
      ? html`<ul class="legend">${o.series.map((s, k) => html`<li><span class="swatch c${k % 6}"></span>${s.name}</li>`)}${
          o.target
            ? html`<li><span class="swatch target"></span>${o.target.label}${targetOnScale ? '' : ' (far above every bar: not drawn to scale)'}</li>`
            : ''
        }</ul>`
      : '';
  return html`<figure class="chart">
<figcaption>${o.title}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${o.title}" preserveAspectRatio="xMidYMid meet">
${ticks}${bars}${target}${xLabels}
<line class="axis-line" x1="${PAD.left}" x2="${WIDTH - right}" y1="${y(low)}" y2="${y(low)}"/>
</svg>
${legend}
<details><summary>${o.title}: the numbers</summary>
<table><thead><tr><th scope="col">${o.labelHeading ?? 'Day'}</th>${o.series.map((s) => html`<th scope="col">${s.name}</th>`)}</tr></thead>
<tbody>${o.labels.map(
    (label, i) =>
      html`<tr><th scope="row">${label}</th>${o.series.map((s) => html`<td>${format(s.values[i] ?? 0)}</td>`)}</tr>`,
  )}</tbody></table>
</details>
</figure>`;
}

/** `2026-11-22` → `11-22` under the axis; other labels as they are. */
function shortLabel(label: string): string {
  return /^\d{4}-\d{2}-\d{2}$/.test(label) ? label.slice(5) : label;
}
