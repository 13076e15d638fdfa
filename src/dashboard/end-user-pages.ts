import type { EndUserSummary } from '../users/index.js';
import { userIdMarkup } from './end-user-id.js';
import { endUserPicker, noSuchEndUser } from './end-user-markup.js';
import { csrfField, formatNumber, formatTime, type Html, html, layout } from './html.js';
import type { DashboardMemoryItem, PageSession } from './pages.js';

/** `/dashboard/documents?user=…` and the like, the id percent-encoded. */
const userLink = (page: 'documents' | 'memory', userId: string) =>
  `/dashboard/${page}?user=${encodeURIComponent(userId)}`;

/** The account's end users, most recently seen first, each with links to their documents and memory. */
export function endUsersPage(o: {
  session: PageSession;
  users: readonly EndUserSummary[];
  /** The id to page on from, when another page follows. */
  next?: string | undefined;
  paged: boolean;
}): string {
  const row = (u: EndUserSummary) => html`<tr><th scope="row">${userIdMarkup(u.userId)}</th>
<td class="num">${formatNumber(u.counts.documents)}</td><td class="num">${formatNumber(u.counts.memories)}</td>
<td class="num">${formatNumber(u.counts.requests)}</td><td>${formatTime(u.lastSeenAt)}</td>
<td class="actions"><a href="${userLink('documents', u.userId)}">Documents</a> <a href="${userLink('memory', u.userId)}">Memory</a></td></tr>`;
  const table = html`<table><caption class="visually-hidden">End users</caption>
<thead><tr><th scope="col">End user</th><th scope="col" class="num">Documents</th><th scope="col" class="num">Memories</th><th scope="col" class="num">Requests</th><th scope="col">Last seen</th><th scope="col"><span class="visually-hidden">Their data</span></th></tr></thead>
<tbody>${o.users.map(row)}</tbody></table>`;
  const pager = html`<p class="row">${o.paged ? html`<a class="button secondary" href="/dashboard/end-users">First page</a>` : ''}${
    o.next
      ? html`<a class="button secondary" href="/dashboard/end-users?after=${encodeURIComponent(o.next)}">Next page</a>`
      : ''
  }</p>`;
  return layout({
    title: 'End users',
    session: o.session,
    section: 'users',
    body: html`<p class="lead">The end users your apps name (<code>user_id</code>, or OpenAI's <code>user</code>): their documents,
memories and requests, most recently seen first.</p>
${o.users.length ? html`${table}${pager}` : html`<p class="empty">No end users yet: one appears when a request, a document or a memory names them.</p>`}`,
  });
}

/** Memory: one end user's memories, each with a Delete button. */
export function memoryPage(o: {
  session: PageSession;
  userId: string;
  /** Undefined: no user chosen, or no such user (`known`). */
  memories: readonly DashboardMemoryItem[] | undefined;
  known: boolean;
  available: boolean;
  notice?: string | undefined;
}): string {
  const shown = userIdMarkup(o.userId);
  let body: Html | string = '';
  if (!o.available) body = html`<p class="empty">Memory per end user is not available on this server.</p>`;
  else if (o.userId && !o.known) body = noSuchEndUser(o.userId);
  else if (o.userId && o.memories?.length) {
    body = html`<h2>Memories of ${shown}</h2><table><caption class="visually-hidden">Memories of ${o.userId}</caption>
<thead><tr><th scope="col">Memory</th><th scope="col">Saved</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${o.memories.map(
      (m) => html`<tr><td>${m.content}</td><td>${formatTime(m.createdAt)}</td>
<td class="actions"><form class="inline" method="post" action="/dashboard/memory/${m.id}/delete" data-confirm="Delete this memory?">
${csrfField(o.session.csrfToken)}<input type="hidden" name="user" value="${o.userId}">
<button type="submit" class="danger" aria-label="Delete memory: ${m.content.slice(0, 40)}">Delete</button></form></td></tr>`,
    )}</tbody></table>
<p><a href="${userLink('documents', o.userId)}">Their documents</a></p>`;
  } else if (o.userId) {
    body = html`<p class="empty">No memories for ${shown}.</p><p><a href="${userLink('documents', o.userId)}">Their documents</a></p>`;
  }
  return layout({
    title: 'Memory',
    session: o.session,
    section: 'memory',
    body: html`<p class="lead">What the service remembers about each end user, recalled into their chats.</p>
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
${endUserPicker('memory', o.userId)}
${body}`,
  });
}
