import { AccountService, SqlAccountStore } from '../accounts/index.js';
import { systemClock } from '../clock/index.js';
import { type Config, loadConfig } from '../config/index.js';
import type { Db } from '../storage/index.js';
import { openDb } from '../storage/index.js';

export interface CliContext {
  config: Config;
  db: Db;
  accounts: AccountService;
}

/** Opens the same storage the service uses (PVAI_DATA_DIR or DATABASE_URL), runs `fn`, closes it. */
export async function withStorage<T>(fn: (ctx: CliContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    return await fn({
      config,
      db,
      accounts: new AccountService(new SqlAccountStore(db), systemClock, {
        tierCeilings: (tier) => config.tiers[tier],
      }),
    });
  } finally {
    await db.close();
  }
}
