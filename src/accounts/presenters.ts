import type { Schema } from '../http/index.js';
import type { Account, ApiKeyRecord } from './types.js';

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export function accountBody(a: Account): Schema<'Account'> {
  return {
    id: a.id,
    email: a.email,
    tier: a.tier,
    credits: a.credits,
    created_at: new Date(a.createdAt).toISOString(),
    log_content: a.logContent ?? false,
  };
}

export function keyBody(k: ApiKeyRecord): Schema<'ApiKey'> {
  return {
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    account_id: k.accountId,
    created_at: new Date(k.createdAt).toISOString(),
    last_used_at: iso(k.lastUsedAt),
    revoked_at: iso(k.revokedAt),
    user_id: k.userId,
    budget: k.budget ?? null,
    spend: { credits: k.spend?.credits ?? 0, period_start: new Date(k.spend?.periodStart ?? 0).toISOString() },
    rate_limits: k.rateLimits ?? null,
    models: (k.models ?? null) as Schema<'ApiKey'>['models'],
    expires_at: iso(k.expiresAt ?? null),
    metadata: k.metadata ?? null,
  };
}
