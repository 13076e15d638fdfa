import type { Logger } from 'pino';
import type { AccountService } from '../accounts/index.js';
import type { ChatEngine } from '../chat/setup.js';
import type { Clock } from '../clock/clock.js';
import type { Config } from '../config/index.js';
import type { AuthFailureLimiter, RateLimiter } from '../limits/index.js';
import type { CodeRunner } from '../sandbox/index.js';
import type { Db } from '../storage/db.js';
import type { UsageStore } from '../usage/index.js';

/** Everything a handler may use; built once by the composition root (src/server.ts). */
export interface Services {
  config: Config;
  clock: Clock;
  logger: Logger;
  db: Db;
  accounts: AccountService;
  limiter: RateLimiter;
  authFailures: AuthFailureLimiter;
  usage: UsageStore;
  chat: ChatEngine;
  sandbox: CodeRunner;
}
