import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, pino } from 'pino';
import { AccountService, createAccountStore } from './accounts/index.js';
import { createChatEngine } from './chat/setup.js';
import { type Clock, systemClock } from './clock/clock.js';
import type { Config } from './config/index.js';
import { createApp } from './http/app.js';
import { createOpenApi } from './http/openapi.js';
import type { Services } from './http/services.js';
import { AuthFailureLimiter, createRateLimitStore, RateLimiter } from './limits/index.js';
import { createSandbox } from './sandbox/index.js';
import { openDb } from './storage/data-source.js';
import { BufferedUsageStore, SqlUsageStore } from './usage/index.js';

export interface ServiceOptions {
  clock?: Clock;
  logger?: Logger;
}

/** The composition root: storage adapters chosen by configuration, then every capability on top. */
export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const clock = options.clock ?? systemClock;
  const logger =
    options.logger ??
    pino({ level: config.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] });
  const db = await openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    owner: true,
  });
  const accountStore = createAccountStore(db, {
    onError: (err) => logger.error({ err }, 'writing credit charges failed'),
  });
  const accounts = new AccountService(accountStore, clock, { authCacheTtlMs: config.authCacheTtlMs });
  const chat = await createChatEngine({ config, db, accounts, clock, logger });
  return {
    config,
    clock,
    logger,
    db,
    chat,
    sandbox: createSandbox(config.sandbox),
    accounts,
    limiter: new RateLimiter(
      createRateLimitStore(db, { onError: (err) => logger.error({ err }, 'writing rate-limit windows failed') }),
      clock,
    ),
    authFailures: new AuthFailureLimiter(config.authFailuresPerMinute, clock),
    usage: new BufferedUsageStore(new SqlUsageStore(db), {
      onError: (err, lost) => logger.error({ err, lost }, 'writing usage rows failed'),
    }),
  };
}

export interface RunningServer {
  url: string;
  server: Server;
  services: Services;
  close(): Promise<void>;
}

/** Starts the HTTP service on config.host:config.port (port 0 picks a free one). */
export async function startServer(config: Config, options: ServiceOptions = {}): Promise<RunningServer> {
  const services = await createServices(config, options);
  const api = await createOpenApi(services);
  const app = createApp(services, api);
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closed = false;
  return {
    url: `http://${host}:${port}`,
    server,
    services,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await services.chat.close();
      await services.sandbox.close();
      await services.usage.flush();
      await services.limiter.close();
      await services.accounts.store.close();
      await services.db.close();
    },
  };
}
