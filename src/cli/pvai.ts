#!/usr/bin/env node
import { Command, InvalidArgumentError, Option } from 'commander';
import { accountBody, keyBody } from '../accounts/index.js';
import { ConfigError, loadConfig } from '../config/index.js';
import { AppError } from '../errors/index.js';
import { isTier, TIERS, type Tier } from '../kernel/index.js';
import { startServer } from '../server.js';
import { withStorage } from './context.js';
import { registerDocsCommands } from './docs.js';
import { runDoctor } from './doctor.js';
import { pullModel } from './models-pull.js';

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 0) throw new InvalidArgumentError('must be a non-negative integer');
  return Number(value);
}

function tier(value: string): Tier {
  if (!isTier(value)) throw new InvalidArgumentError(`must be one of ${TIERS.join(', ')}`);
  return value;
}

function print(json: boolean, value: unknown, text: string): void {
  console.log(json ? JSON.stringify(value) : text);
}

const program = new Command('pvai').description('pvai: self-hosted unified AI service').showHelpAfterError();

program
  .command('serve')
  .description('start the HTTP service (PVAI_HOST:PVAI_PORT, default 127.0.0.1:8080)')
  .action(async () => {
    const running = await startServer(loadConfig());
    running.runtime.logger.info({ url: running.url, storage: running.runtime.db.describe }, 'pvai listening');
    const stop = async () => {
      await running.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .requiredOption('--email <email>')
  .addOption(new Option('--tier <tier>').choices(TIERS).makeOptionMandatory())
  .option('--credits <n>', 'starting credit balance', positiveInt, 0)
  .option('--password <password>', 'password for the developer dashboard')
  .option('--json', 'machine-readable output')
  .action(async (o: { email: string; tier: string; credits: number; password?: string; json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      const { account, created } = await service.createAccount({
        email: o.email,
        tier: tier(o.tier),
        credits: o.credits,
        ...(o.password ? { password: o.password } : {}),
      });
      const out = {
        account: { id: account.id, email: account.email, tier: account.tier, credits: account.credits },
        api_key: created.secret,
      };
      print(Boolean(o.json), out, `account ${account.id} (${account.tier})\nAPI key (shown once): ${created.secret}`);
    });
  });
accounts
  .command('set-tier')
  .requiredOption('--account <id>')
  .requiredOption('--tier <tier>', TIERS.join('|'), tier)
  .option('--json')
  .action(async (o: { account: string; tier: Tier; json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      const account = await service.setTier(o.account, o.tier);
      print(Boolean(o.json), { account: accountBody(account) }, `account ${account.id} is now ${account.tier}`);
    });
  });

const keys = program.command('keys').description('manage API keys');
keys
  .command('create')
  .requiredOption('--account <id>')
  .option('--name <name>')
  .option('--json')
  .action(async (o: { account: string; name?: string; json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      const { key, secret } = await service.createKey(o.account, o.name ?? null);
      print(
        Boolean(o.json),
        { key: { id: key.id, prefix: key.prefix, name: key.name }, api_key: secret },
        `key ${key.id}\nAPI key (shown once): ${secret}`,
      );
    });
  });
keys
  .command('list')
  .requiredOption('--account <id>')
  .option('--json')
  .action(async (o: { account: string; json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      const list = (await service.listKeys(o.account)).map(keyBody);
      const text = list
        .map((k) => `${k.id}  ${k.prefix}…  ${k.name ?? ''}  ${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`)
        .join('\n');
      print(Boolean(o.json), { keys: list }, text || 'no keys');
    });
  });
keys
  .command('revoke')
  .argument('<key-id>')
  .option('--json')
  .action(async (keyId: string, o: { json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      const key = await service.revokeKey(keyId);
      print(Boolean(o.json), { key: keyBody(key) }, `key ${key.id} revoked`);
    });
  });

program
  .command('credits')
  .description('manage credits')
  .command('add')
  .requiredOption('--account <id>')
  .requiredOption('--amount <n>', 'credits to add', positiveInt)
  .option('--json')
  .action(async (o: { account: string; amount: number; json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      const account = await service.addCredits(o.account, o.amount);
      print(Boolean(o.json), { account: accountBody(account) }, `account ${account.id} has ${account.credits} credits`);
    });
  });

program
  .command('models')
  .description('manage local models')
  .command('pull')
  .argument('<url-or-path>', 'a GGUF file URL or path')
  .option('--sha256 <hex>', 'expected SHA-256 of the file')
  .option('--json')
  .action(async (source: string, o: { sha256?: string; json?: boolean }) => {
    const pulled = await pullModel(source, o.sha256);
    print(Boolean(o.json), pulled, `model ready: ${pulled.path} (${pulled.bytes} bytes, sha256 ${pulled.sha256})`);
  });

program
  .command('doctor')
  .description('check every dependency and say what is missing')
  .option('--json')
  .action(async (o: { json?: boolean }) => {
    process.exitCode = await runDoctor(Boolean(o.json));
  });

registerDocsCommands(program);

program.parseAsync().catch((err: unknown) => {
  if (err instanceof AppError || err instanceof ConfigError) {
    console.error(`pvai: ${err.message}`);
  } else {
    console.error(err);
  }
  process.exit(1);
});
