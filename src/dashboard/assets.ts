/**
 * The dashboard's stylesheet and its one script, served by the service itself (no CDN, no build step).
 * The pages work without the script: it adds the copy button's action, the confirmations, and that a reload of a
 * page answering a refused POST does not post again.
 */

export const DASHBOARD_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; --accent: #0b57d0;
  --danger: #b42318; --ok: #1a7f37; --c0: #0b57d0; --c1: #e8710a; --c2: #1a7f37; --c3: #a142f4; --c4: #c5221f; --c5: #12828f; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f4b400; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; z-index: 2; }
.skip:focus { left: .5rem; }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem 2rem; padding: .75rem 1.5rem;
  border-bottom: 1px solid var(--line); background: var(--bg); }
.brand { font-weight: 700; font-size: 1.15rem; text-decoration: none; color: var(--fg); }
nav ul { display: flex; gap: .25rem; list-style: none; margin: 0; padding: 0; flex-wrap: wrap; }
nav a { display: block; padding: .35rem .75rem; border-radius: 6px; text-decoration: none; color: var(--fg); }
nav a:hover { background: #eaeef2; }
nav a[aria-current="page"] { background: var(--accent); color: #fff; }
.signout { margin-left: auto; display: flex; align-items: center; gap: .75rem; }
.who { color: var(--muted); font-size: .9rem; min-width: 0; overflow-wrap: anywhere; }
.signout a { font-size: .9rem; }
.credit-banner { margin-bottom: 1rem; }
.field .sub, p.sub { color: var(--muted); font-size: .85rem; }
td.num span, tbody th[scope="row"] { white-space: nowrap; }
.tier { display: inline-block; padding: 0 .4rem; border: 1px solid var(--line); border-radius: 999px; font-size: .8rem; }
main { max-width: 1000px; margin: 0 auto; padding: 1.5rem; }
main:focus { outline: none; }
main.narrow { max-width: 26rem; padding-top: 3rem; }
h1 { font-size: 1.6rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
p.lead { color: var(--muted); margin-top: -.5rem; }
form.inline { display: inline; }
.field { display: flex; flex-direction: column; gap: .25rem; margin-bottom: 1rem; }
.row { display: flex; flex-wrap: wrap; gap: .75rem; align-items: flex-end; }
.row .field { margin-bottom: 0; }
label { font-weight: 600; }
input[type=text], input[type=email], input[type=password] { font: inherit; padding: .5rem .6rem; border: 1px solid #8c959f;
  border-radius: 6px; min-width: 16rem; }
button { font: inherit; padding: .45rem .9rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; cursor: pointer; }
button:hover { filter: brightness(1.08); }
a.button { display: inline-block; padding: .35rem .8rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; text-decoration: none; }
a.button.secondary { background: #fff; color: var(--fg); border-color: #8c959f; }
.windows { margin-bottom: 1rem; gap: .5rem; }
button.secondary { background: #fff; color: var(--fg); border-color: #8c959f; }
button.danger, a.button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 1.25rem; background: #fff; }
.signin { margin: 0; }
.notice { border-left: 4px solid var(--accent); background: #eef4ff; padding: .75rem 1rem; border-radius: 4px; margin-bottom: 1rem; }
.error { border-left: 4px solid var(--danger); background: #fff1f0; padding: .75rem 1rem; border-radius: 4px; margin-bottom: 1rem; }
.secret { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; margin: .5rem 0; }
.secret code { font-size: .95rem; padding: .4rem .6rem; background: #fff; border: 1px solid var(--line); border-radius: 6px;
  word-break: break-all; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
thead th { font-size: .85rem; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.actions { white-space: nowrap; text-align: right; }
td.actions form + form { margin-left: .4rem; }
.revoked { color: var(--muted); }
.badge { display: inline-block; font-size: .8rem; padding: 0 .45rem; border-radius: 999px; border: 1px solid currentColor; }
.badge.ok { color: var(--ok); } .badge.off { color: var(--muted); } .badge.bad { color: var(--danger); }
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: .75rem; margin-bottom: 1rem; }
.stat { border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
.stat .label { color: var(--muted); font-size: .85rem; }
.stat .value { font-size: 1.4rem; font-weight: 650; font-variant-numeric: tabular-nums; }
.stat .sub { color: var(--muted); font-size: .8rem; }
.meter { height: .5rem; background: #eaeef2; border-radius: 999px; overflow: hidden; margin-top: .35rem; }
.meter span { display: block; height: 100%; background: var(--accent); }
figure.chart { margin: 0 0 1.5rem; border: 1px solid var(--line); border-radius: 8px; padding: .75rem 1rem; }
figure.chart figcaption { font-weight: 600; margin-bottom: .25rem; }
figure.chart svg { width: 100%; height: auto; display: block; }
figure.chart details { margin-top: .5rem; font-size: .9rem; }
figure.chart summary { cursor: pointer; color: var(--muted); }
svg .grid { stroke: #eaeef2; } svg .axis-line { stroke: #8c959f; }
svg .axis { font-size: 11px; fill: var(--muted); }
svg .target { stroke: var(--danger); stroke-dasharray: 5 4; stroke-width: 1.5; }
svg .target-label { font-size: 11px; fill: var(--danger); }
svg .c0, .swatch.c0 { fill: var(--c0); background: var(--c0); } svg .c1, .swatch.c1 { fill: var(--c1); background: var(--c1); }
svg .c2, .swatch.c2 { fill: var(--c2); background: var(--c2); } svg .c3, .swatch.c3 { fill: var(--c3); background: var(--c3); }
svg .c4, .swatch.c4 { fill: var(--c4); background: var(--c4); } svg .c5, .swatch.c5 { fill: var(--c5); background: var(--c5); }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; padding: 0; margin: .25rem 0 0; font-size: .85rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: 2px; margin-right: .35rem; vertical-align: -1px; }
.swatch.target { background: none; border-top: 2px dashed var(--danger); height: 0; vertical-align: 3px; }
.bar { display: inline-block; height: .6rem; background: var(--c0); border-radius: 2px; vertical-align: middle; }
.empty { color: var(--muted); font-style: italic; }
select { font: inherit; padding: .45rem .5rem; border: 1px solid #8c959f; border-radius: 6px; background: #fff; }
.filters { margin: 1rem 0; }
.table-scroll { overflow-x: auto; max-width: 100%; position: relative; }
table.logs td { vertical-align: top; font-size: .9rem; }
table.logs pre { white-space: pre-wrap; overflow-wrap: anywhere; max-width: 36rem; max-height: 16rem; overflow: auto; margin: .25rem 0; }
.pager { display: flex; gap: 1rem; margin-top: 1rem; }
button, a.button { white-space: nowrap; }
fieldset.field { border: 0; padding: 0; margin: 0; } .choice { display: inline-block; margin-right: .75rem; white-space: nowrap; }
details.limits, details.edit { width: 100%; } details.edit { margin-top: .35rem; } details > summary { cursor: pointer; }
@media (max-width: 640px) {
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
  table.stack tr { border-bottom: 1px solid #d0d7de; padding: .5rem 0; }
  table.stack td { border: 0; padding: .2rem 0; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  main { padding: 1rem; }
  header.top { padding: .75rem 1rem; gap: .5rem 1rem; }
  .signout { margin-left: 0; width: 100%; justify-content: space-between; }
  .bar { display: none; }
  th, td { padding: .4rem .35rem; }
  table { display: block; overflow-x: auto; position: relative; }
  input[type=text], input[type=email], input[type=password] { min-width: 0; width: 100%; }
  .row .field { width: 100%; }
}
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

export const DASHBOARD_JS = `
// A page that answers a POST (a refused sign-in keeps its 401 or 429) becomes a plain entry of the history:
// a reload then asks for the page again instead of posting the form again.
history.replaceState(history.state, '', location.href);
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = document.getElementById(button.dataset.copy).textContent;
    const status = document.getElementById(button.dataset.copy + '-status');
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = 'Copied to the clipboard.';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(document.getElementById(button.dataset.copy));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      status.textContent = 'Selected: press Ctrl+C (or ⌘C) to copy.';
    }
  });
}
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!confirm(form.dataset.confirm)) event.preventDefault();
  });
}
`;
