import type { Command } from 'commander';
import { accountBody, keyBody } from '../accounts/index.js';
import type { Schema } from '../http/index.js';
import { checkOperationInput } from '../http/index.js';
import { withStorage } from './context.js';
import { plural, table } from './table.js';

/** The date of an ISO timestamp, as a table cell (the time is in --json). */
const day = (iso: string | null) => (iso ? iso.slice(0, 10) : '');

/** A list of keys as a headed table: the prefix only, never a secret. Shared by `keys list` and `accounts show`. */
export function keysTable(keys: ReadonlyArray<Schema<'ApiKey'>>): string {
  return table(
    ['ID', 'PREFIX', 'NAME', 'END USER', 'CREATED', 'STATUS'],
    keys.map((k) => [
      k.id,
      `${k.prefix}…`,
      k.name ?? '',
      k.user_id ?? '',
      day(k.created_at),
      k.revoked_at ? `revoked ${day(k.revoked_at)}` : 'active',
    ]),
    'no keys',
  );
}

/** `pvai accounts list` and `pvai accounts show <id>`: what the admin API's GET operations answer, readable. */
export function registerAccountViews(accounts: Command): void {
  accounts
    .command('list')
    .description('every account: id, email, tier, credit balance')
    .option('--json', "machine-readable output (the admin API's list)")
    .action(async (o: { json?: boolean }) => {
      await withStorage(async ({ accounts: service }) => {
        const list = (await service.listAccounts()).map(accountBody);
        if (o.json) {
          console.log(JSON.stringify({ object: 'list', data: list }));
          return;
        }
        const rows = list.map((a) => [a.id, a.email, a.tier, String(a.credits), day(a.created_at)]);
        console.log(table(['ID', 'EMAIL', 'TIER', 'CREDITS', 'CREATED'], rows, 'no accounts'));
      });
    });
  accounts
    .command('show')
    .description('one account with its balance and its keys')
    .argument('<account-id>')
    .option('--json', 'machine-readable output: {account, keys}')
    .action(async (accountId: string, o: { json?: boolean }) => {
      await checkOperationInput('adminGetAccount', { params: { account_id: accountId } });
      await withStorage(async ({ accounts: service }) => {
        const account = accountBody(await service.requireAccount(accountId));
        const keys = (await service.listKeys(accountId)).map(keyBody);
        if (o.json) {
          console.log(JSON.stringify({ account, keys }));
          return;
        }
        const active = keys.filter((k) => !k.revoked_at).length;
        console.log(
          [
            `account  ${account.id}`,
            `email    ${account.email}`,
            `tier     ${account.tier}`,
            `balance  ${plural(account.credits, 'credit')}`,
            `created  ${account.created_at}`,
            `keys     ${plural(keys.length, 'key')}, ${active} active`,
            '',
            keysTable(keys),
          ].join('\n'),
        );
      });
    });
}
