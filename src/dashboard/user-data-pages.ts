import { userIdMarkup } from './end-user-id.js';
import { csrfField, html, layout } from './html.js';
import type { PageSession } from './pages.js';

/** `1 memory`, `2 memories`. */
function counted(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What the erase confirmation shows of what the user has (their documents and memories, counted). */
export interface UserDataPreview {
  documents: number | undefined;
  memories: number | undefined;
}

/** The erase's own page: what goes, what stays, and a form that asks for the user id typed out. */
export function eraseConfirmPage(o: {
  session: PageSession;
  userId: string;
  preview: UserDataPreview;
  error?: string;
}): string {
  const count = (n: number | undefined, one: string, many: string) =>
    n === undefined ? '' : html`<li>${counted(n, one, many)}</li>`;
  return layout({
    title: 'Erase an end user',
    session: o.session,
    section: 'documents',
    body: html`${o.error ? html`<p class="error" role="alert">${o.error}</p>` : ''}
<section class="card" aria-labelledby="erase-title">
<h2 id="erase-title" style="margin-top:0">Erase everything about ${userIdMarkup(o.userId)}</h2>
<p>This deletes, for good and at once, everything your account holds about this end user:</p>
<ul>
${count(o.preview.documents, 'document', 'documents')}${count(o.preview.memories, 'memory', 'memories')}
<li>their documents' text, chunks and search index entries, their memories' history and queued work</li>
<li>cached chat answers made from their documents or memories (never served again)</li>
</ul>
<p>Their usage rows stay, without the user id, so your usage and credits stay true.
<a href="/dashboard/users/export?user=${encodeURIComponent(o.userId)}">Export their data</a> first if you need a copy.</p>
<form method="post" action="/dashboard/users/erase">
  ${csrfField(o.session.csrfToken)}<input type="hidden" name="user" value="${o.userId}">
  <div class="field"><label for="confirm">Type the user id to confirm</label>
    <input id="confirm" name="confirm" type="text" maxlength="256" required autocomplete="off" spellcheck="false"></div>
  <button type="submit" class="danger">Erase this user</button>
  <a class="button secondary" href="/dashboard/documents?user=${encodeURIComponent(o.userId)}">Cancel</a>
</form>
</section>`,
  });
}

/** After the erase: what was erased, by kind. */
export function erasedPage(o: {
  session: PageSession;
  userId: string;
  erased: { memories: number; documents: number; usage: number };
}): string {
  return layout({
    title: 'End user erased',
    session: o.session,
    section: 'documents',
    body: html`<p class="notice" role="status">Erased ${userIdMarkup(o.userId)}: ${counted(o.erased.documents, 'document', 'documents')}
and ${counted(o.erased.memories, 'memory', 'memories')} deleted; ${counted(o.erased.usage, 'usage row', 'usage rows')} kept
without the user id.</p>
<p><a href="/dashboard/end-users">Back to the end users</a></p>`,
  });
}
