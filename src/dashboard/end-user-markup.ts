import { userIdMarkup } from './end-user-id.js';
import { type Html, html } from './html.js';

/** The form that picks an end user on a per-user page, with the way to the list. */
export function endUserPicker(page: 'documents' | 'memory', userId: string): Html {
  return html`<form method="get" action="/dashboard/${page}" class="row card">
  <div class="field"><label for="user">End user</label>
    <input id="user" name="user" type="text" maxlength="256" required value="${userId}" placeholder="the user id your app sends"></div>
  <button type="submit">Show ${page}</button>
  <a class="button secondary" href="/dashboard/end-users">Choose from the end users</a>
</form>`;
}

/** An id the account holds nothing of: said plainly, with nothing to act on (a typo must not look like an empty user). */
export function noSuchEndUser(userId: string): Html {
  return html`<p class="error" role="alert">No such end user: ${userIdMarkup(userId)}. This account holds no request,
document or memory that names them; check the id, or <a href="/dashboard/end-users">choose from the end users</a>.</p>`;
}
