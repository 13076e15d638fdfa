import { type DashboardRouter, signedIn } from '../context.js';
import type { DashboardDeps, DashboardModel } from '../deps.js';
import { html, layout } from '../html.js';
import type { PageSession } from '../pages.js';
import { send } from '../web.js';

/** Models: what serves each PV model now and what that is good for, beside what the tier sells it as. */
export function modelsRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'models'>): void {
  router.get('/models', async (ctx) => {
    const signed = signedIn(ctx);
    const models = (await deps.models?.list(signed.account)) ?? [];
    send(ctx, 200, modelsPage({ session: signed.page, models }));
  });
}

function modelsPage(o: { session: PageSession; models: readonly DashboardModel[] }): string {
  const own = o.models.filter((m) => m.alias_of === undefined);
  const aliases = o.models.filter((m) => m.alias_of !== undefined);
  const server = (s: DashboardModel['served_by']) =>
    s.kind === 'local' ? html`local: <code>${s.model}</code>` : html`<code>${s.model}</code> at <code>${s.host}</code>`;
  const row = (m: DashboardModel) => html`<tr>
<th scope="row"><code>${m.id}</code></th>
<td>${m.intended_use}</td>
<td>${server(m.served_by)}</td>
<td>${m.served_by.note}</td>
<td>${m.credits_per_request}</td>
<td>${m.available ? html`<span class="badge ok">yes</span>` : html`<span class="badge off">no</span>`}</td>
</tr>`;
  return layout({
    title: 'Models',
    session: o.session,
    section: 'models',
    body: html`<p class="lead">What answers each model now (the first target of its route), and what that model is good
for; the tier's description is what it is sold as. <code>docs/routing.md</code> says how to route them elsewhere.</p>
<table>
<caption class="visually-hidden">Models and what serves them</caption>
<thead><tr><th scope="col">Model</th><th scope="col">Sold as</th><th scope="col">Served by</th><th scope="col">Good for</th><th scope="col">Credits</th><th scope="col">Your tier</th></tr></thead>
<tbody>${own.map(row)}</tbody></table>
${
  aliases.length > 0
    ? html`<p>Other names a request may use: ${aliases.map((m, i) => html`${i > 0 ? ', ' : ''}<code>${m.id}</code> → <code>${m.alias_of}</code>`)}.</p>`
    : html`<p class="empty">No aliases configured (<code>modelAliases</code>): requests name the models above.</p>`
}`,
  });
}
