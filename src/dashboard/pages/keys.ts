import type { KeyLimitsInput } from '../../accounts/index.js';
import { type DashboardRouter, formOf, type Signed, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { keysPage } from '../key-page.js';
import { DASHBOARD_PATH, seeOther, send } from '../web.js';

/** What the page after a create or rotate shows once: the new key's secret (sealed in the session's flash). */
interface CreatedFlash {
  keyId: string;
  secret: string;
  rotatedFrom?: string;
}

const NOTICES: Record<string, string> = {
  revoked: 'Key revoked: it no longer works.',
  updated: 'Key updated.',
};

/**
 * A form's fields as the admin API's body, for readKeyLimits (the one validation of API, CLI and dashboard). An
 * empty field is left out at creation and cleared (null) when editing.
 */
function limitsOf(form: URLSearchParams, editing: boolean): KeyLimitsInput {
  const text = (name: string) => (form.get(name) ?? '').trim();
  const number = (name: string) => (/^\d+$/.test(text(name)) ? Number(text(name)) : text(name));
  const input: KeyLimitsInput = {};
  const empty = editing ? null : undefined;
  const put = <K extends keyof KeyLimitsInput>(key: K, value: KeyLimitsInput[K] | undefined) => {
    if (value !== undefined) input[key] = value;
  };
  put('name', text('name') || empty);
  put('budget', text('budget') ? { credits: number('budget'), period: text('budget_period') || 'month' } : empty);
  const rpm = text('rpm');
  const rpd = text('rpd');
  put(
    'rate_limits',
    rpm || rpd ? { ...(rpm ? { rpm: number('rpm') } : {}), ...(rpd ? { rpd: number('rpd') } : {}) } : empty,
  );
  const models = form.getAll('models');
  put('models', models.length > 0 ? models : empty);
  // A date input's day: the key works through it and stops at the next UTC midnight.
  const day = text('expires');
  put('expires_at', day ? (/^\d{4}-\d{2}-\d{2}$/.test(day) ? `${day}T23:59:59.999Z` : day) : empty);
  const lines = text('metadata')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  // A line without `=` keeps no value: the check then names it.
  const pairs = lines.map((l) =>
    l.indexOf('=') > 0 ? [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] : [l, null],
  );
  put('metadata', lines.length > 0 ? Object.fromEntries(pairs) : empty);
  return input;
}

/**
 * API keys: the account's own, created, edited, revoked and rotated; another account's ids are 404s. Every form
 * answers with a redirect (Post/Redirect/Get): a reload never creates a second key, and a new secret is shown once,
 * from the session's flash, on the page the redirect leads to.
 */
export function keysRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'accounts' | 'sessions'>): void {
  const keysOf = (accountId: string) => deps.accounts.listKeys(accountId);
  const flash = (signed: Signed, created: CreatedFlash) =>
    deps.sessions.setFlash(signed.token, JSON.stringify(created));

  router.get('/keys', async (ctx) => {
    const signed = signedIn(ctx);
    const notice = NOTICES[Object.keys(ctx.query).find((k) => k in NOTICES) ?? ''];
    const keys = await keysOf(signed.account.id);
    const taken = await deps.sessions.takeFlash(signed.token);
    const shown = taken ? (JSON.parse(taken) as CreatedFlash) : undefined;
    const key = shown && keys.find((k) => k.id === shown.keyId);
    const created =
      shown && key
        ? { secret: shown.secret, key, ...(shown.rotatedFrom ? { rotatedFrom: shown.rotatedFrom } : {}) }
        : undefined;
    send(
      ctx,
      200,
      keysPage({
        session: signed.page,
        keys,
        tier: signed.account.tier,
        ...(created ? { created } : {}),
        ...(notice ? { notice } : {}),
      }),
    );
  });

  router.post('/keys', async (ctx) => {
    const signed = signedIn(ctx);
    const { name, ...limits } = limitsOf(formOf(ctx), false);
    const created = await deps.accounts.createKey(signed.account.id, typeof name === 'string' ? name : null, null, {
      ...limits,
      // Named: the form's field is required, and the API's check says so when it is empty.
      name: name ?? '',
    });
    await flash(signed, { keyId: created.key.id, secret: created.secret });
    seeOther(ctx, `${DASHBOARD_PATH}/keys#new-key`);
  });

  router.post('/keys/:id/edit', async (ctx) => {
    const signed = signedIn(ctx);
    await deps.accounts.updateKey(String(ctx.params.id), limitsOf(formOf(ctx), true), signed.account.id);
    seeOther(ctx, `${DASHBOARD_PATH}/keys?updated=1`);
  });

  router.post('/keys/:id/revoke', async (ctx) => {
    await deps.accounts.revokeOwnKey(signedIn(ctx).account.id, String(ctx.params.id));
    seeOther(ctx, `${DASHBOARD_PATH}/keys?revoked=1`);
  });

  router.post('/keys/:id/rotate', async (ctx) => {
    const signed = signedIn(ctx);
    const old = String(ctx.params.id);
    const created = await deps.accounts.rotateOwnKey(signed.account.id, old);
    const prefix = (await keysOf(signed.account.id)).find((k) => k.id === old)?.prefix;
    await flash(signed, {
      keyId: created.key.id,
      secret: created.secret,
      ...(prefix ? { rotatedFrom: `${prefix}…` } : {}),
    });
    seeOther(ctx, `${DASHBOARD_PATH}/keys#new-key`);
  });
}
