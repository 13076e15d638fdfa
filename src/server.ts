import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compose, type Runtime, type ServiceOptions } from './compose.js';
import type { Config } from './config/index.js';
import {
  applyServerTimeouts,
  ConnectionLimits,
  connectionCaps,
  createApp,
  createOpenApi,
  isWebSocketUpgrade,
  readFdLimit,
  upgradeRequests,
} from './http/index.js';
import { GracefulShutdown, type ShutdownOptions, type ShutdownReport } from './shutdown.js';

export type { ServiceOptions } from './compose.js';
export { FINAL_ANSWERS_MS, type ShutdownOptions, type ShutdownReport } from './shutdown.js';

export interface RunningServer {
  url: string;
  server: Server;
  runtime: Runtime;
  /**
   * The graceful stop (SIGTERM): refuses new connections and reports not ready at once, lets requests in
   * flight finish for up to `graceMs`, ends the rest (a stream with a final error event, any other request
   * with 503), then writes what is pending (usage rows, limits, credits) and closes storage.
   */
  shutdown(options: ShutdownOptions): Promise<ShutdownReport>;
  /** Ends the grace period of a shutdown now (a second signal). */
  hurry(): void;
  /** Stops at once: work in flight is ended and every connection closed (tests). */
  close(): Promise<void>;
}

/** The connection caps in force, once at start; a warning when they are not what was asked for. */
function logCaps(runtime: Runtime, caps: ReturnType<typeof connectionCaps>): void {
  const fields = {
    max_connections: caps.total,
    max_connections_per_address: caps.perAddress,
    fd_limit: caps.fdLimit,
  };
  if (caps.lowered) {
    runtime.logger.warn(fields, 'http.maxConnections lowered to what the open-files limit allows (ulimit -n)');
  } else if (!caps.fdLimitKnown) {
    runtime.logger.warn(fields, 'open-files limit unknown on this system: connection caps assume 1024');
  } else {
    runtime.logger.info(fields, 'connection caps');
  }
}

/** Starts the HTTP service on config.host:config.port (port 0 picks a free one). */
export async function startServer(config: Config, options: ServiceOptions = {}): Promise<RunningServer> {
  const runtime = await compose(config, options);
  const api = await createOpenApi(runtime.operations, runtime.ports);
  const app = createApp(runtime.ports, api);
  const graceful = new GracefulShutdown(runtime.lifecycle);
  const caps = connectionCaps(config.http, readFdLimit());
  const connections = new ConnectionLimits(caps, {
    logger: runtime.logger,
    events: runtime.ports.connections,
    requests: graceful,
  });
  const server = createServer({ shouldUpgradeCallback: isWebSocketUpgrade }, connections.track(app.callback()));
  connections.attach(server);
  const upgrades = upgradeRequests(runtime.ports, {
    api,
    idleTimeoutMs: config.http.keepAliveTimeoutMs,
    sockets: graceful,
  });
  server.on('upgrade', connections.trackUpgrades(upgrades));
  applyServerTimeouts(server, config.http, runtime.logger);
  logCaps(runtime, caps);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let stopped: Promise<ShutdownReport> | undefined;
  const shutdown = (options: ShutdownOptions) => {
    stopped ??= (async () => {
      const report = await graceful.stop(server, options);
      // A stream's usage row is recorded a few promise turns after its answer ended.
      await new Promise((resolve) => setImmediate(resolve));
      await runtime.close();
      return report;
    })();
    return stopped;
  };
  return {
    url: `http://${host}:${port}`,
    server,
    runtime,
    shutdown,
    hurry: () => graceful.hurry(),
    async close() {
      await shutdown({ graceMs: 0, finalMs: 0 });
    },
  };
}
