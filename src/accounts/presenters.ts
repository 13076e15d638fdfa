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
  };
}
