import type { Tier } from '../config/index.js';
import { bodyOf, json, type OperationHandlers } from '../http/handler.js';
import type { Services } from '../http/services.js';
import { accountBody, keyBody } from './presenters.js';

interface AccountCreate {
  email: string;
  tier: Tier;
  credits?: number;
  password?: string;
}

/** The operator's API under /admin, behind PVAI_ADMIN_TOKEN. */
export function adminHandlers(services: Services): OperationHandlers {
  const accounts = services.accounts;
  const accountId = (c: { request: { params: Record<string, unknown> } }) => String(c.request.params.account_id);
  const keyId = (c: { request: { params: Record<string, unknown> } }) => String(c.request.params.key_id);
  return {
    adminCreateAccount: async (c, ctx) => {
      const { account, created } = await accounts.createAccount(bodyOf<AccountCreate>(c));
      json(ctx, 201, { account: accountBody(account), api_key: created.secret });
    },
    adminListAccounts: async (_c, ctx) => {
      json(ctx, 200, { object: 'list', data: (await accounts.store.listAccounts()).map(accountBody) });
    },
    adminGetAccount: async (c, ctx) => {
      json(ctx, 200, accountBody(await accounts.requireAccount(accountId(c))));
    },
    adminUpdateAccount: async (c, ctx) => {
      json(ctx, 200, accountBody(await accounts.setTier(accountId(c), bodyOf<{ tier: Tier }>(c).tier)));
    },
    adminAddCredits: async (c, ctx) => {
      json(ctx, 200, accountBody(await accounts.addCredits(accountId(c), bodyOf<{ amount: number }>(c).amount)));
    },
    adminCreateKey: async (c, ctx) => {
      const name = (c.request.requestBody as { name?: string } | undefined)?.name ?? null;
      const created = await accounts.createKey(accountId(c), name);
      json(ctx, 201, { key: keyBody(created.key), api_key: created.secret });
    },
    adminListKeys: async (c, ctx) => {
      json(ctx, 200, { object: 'list', data: (await accounts.listKeys(accountId(c))).map(keyBody) });
    },
    adminRevokeKey: async (c, ctx) => {
      json(ctx, 200, keyBody(await accounts.revokeKey(keyId(c))));
    },
    adminRotateKey: async (c, ctx) => {
      const created = await accounts.rotateKey(keyId(c));
      json(ctx, 201, { key: keyBody(created.key), api_key: created.secret });
    },
  };
}
