import { csrfField, html, layout } from './html.js';
import type { PageSession } from './pages.js';

/** The shortest password AccountService.setPassword takes; the longest the sign-in form reads (sign-in-form.ts). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/**
 * Why a password change was refused, as its redirect names it (`/dashboard/password?error=…`): the POST answers
 * only with redirects, so the page says it after the GET.
 */
export const PASSWORD_REFUSALS = {
  current: 'The current password is wrong. Nothing was changed.',
  length: `The new password must have ${PASSWORD_MIN} to ${PASSWORD_MAX} characters. Nothing was changed.`,
  mismatch: 'The two new passwords differ. Nothing was changed.',
} as const;
export type PasswordRefusal = keyof typeof PASSWORD_REFUSALS;

/** The password change form: the current password, the new one twice; its outcome above it. */
export function passwordPage(o: { session: PageSession; error?: PasswordRefusal; changed?: boolean }): string {
  return layout({
    title: 'Password',
    session: o.session,
    section: 'password',
    body: html`${o.error ? html`<p class="error" role="alert">${PASSWORD_REFUSALS[o.error]}</p>` : ''}
${o.changed ? html`<p class="notice" role="status">Password changed. Your other sessions were signed out.</p>` : ''}
<section class="card" aria-labelledby="password-title">
<h2 id="password-title" style="margin-top:0">Change your password</h2>
<p>The password you sign in to this dashboard with. Changing it signs out every other session of your account.</p>
<form method="post" action="/dashboard/password">
  ${csrfField(o.session.csrfToken)}
  <input type="text" name="username" autocomplete="username" value="${o.session.email}" hidden>
  <div class="field"><label for="current">Current password</label>
    <input id="current" name="current" type="password" autocomplete="current-password" required></div>
  <div class="field"><label for="new-password">New password</label>
    <input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" aria-describedby="password-rule">
    <span id="password-rule" class="sub">${PASSWORD_MIN} to ${PASSWORD_MAX} characters</span></div>
  <div class="field"><label for="repeat-password">New password again</label>
    <input id="repeat-password" name="repeat" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}"></div>
  <button type="submit">Change password</button>
</form>
</section>`,
  });
}
