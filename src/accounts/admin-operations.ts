import type { Operations } from '../http/index.js';
import type { AccountService } from './account-service.js';
import { accountBody, keyBody } from './presenters.js';

type AdminOperationId =
  | 'adminCreateAccount'
  | 'adminListAccounts'
  | 'adminGetAccount'
  | 'adminUpdateAccount'
  | 'adminAddCredits'
  | 'adminCreateKey'
  | 'adminListKeys'
  | 'adminRevokeKey'
  | 'adminRotateKey'
  | 'adminUpdateKey';

/** The operator's API under /admin, behind PVAI_ADMIN_TOKEN. */
export function adminOperations(accounts: AccountService): Operations<AdminOperationId> {
  return {
    adminCreateAccount: async ({ body }) => {
      const { account, created } = await accounts.createAccount(body);
      return { status: 201, body: { account: accountBody(account), api_key: created.secret } };
    },
    adminListAccounts: async () => ({
      status: 200,
      body: { object: 'list', data: (await accounts.listAccounts()).map(accountBody) },
    }),
    adminGetAccount: async ({ params }) => ({
      status: 200,
      body: accountBody(await accounts.requireAccount(params.account_id)),
    }),
    adminUpdateAccount: async ({ params, body }) => {
      let account = await accounts.requireAccount(params.account_id);
      if (body.tier !== undefined) account = await accounts.setTier(params.account_id, body.tier);
      if (body.log_content !== undefined) account = await accounts.setLogContent(params.account_id, body.log_content);
      return { status: 200, body: accountBody(account) };
    },
    adminAddCredits: async ({ params, body }) => ({
      status: 200,
      body: accountBody(await accounts.addCredits(params.account_id, body.amount)),
    }),
    adminCreateKey: async ({ params, body }) => {
      const { name, user_id, ...limits } = body ?? {};
      const created = await accounts.createKey(params.account_id, name ?? null, user_id ?? null, limits);
      return { status: 201, body: { key: keyBody(created.key), api_key: created.secret } };
    },
    adminListKeys: async ({ params }) => ({
      status: 200,
      body: { object: 'list', data: (await accounts.listKeys(params.account_id)).map(keyBody) },
    }),
    adminUpdateKey: async ({ params, body }) => ({
      status: 200,
      body: keyBody(await accounts.updateKey(params.key_id, body)),
    }),
    adminRevokeKey: async ({ params }) => ({ status: 200, body: keyBody(await accounts.revokeKey(params.key_id)) }),
    adminRotateKey: async ({ params }) => {
      const created = await accounts.rotateKey(params.key_id);
      return { status: 201, body: { key: keyBody(created.key), api_key: created.secret } };
    },
  };
}
