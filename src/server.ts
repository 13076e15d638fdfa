import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compose, type Runtime, type ServiceOptions } from './compose.js';
import type { Config } from './config/index.js';
import { applyServerTimeouts, createApp, createOpenApi } from './http/index.js';

export type { ServiceOptions } from './compose.js';

export interface RunningServer {
  url: string;
  server: Server;
  runtime: Runtime;
  close(): Promise<void>;
}

/** Starts the HTTP service on config.host:config.port (port 0 picks a free one). */
export async function startServer(config: Config, options: ServiceOptions = {}): Promise<RunningServer> {
  const runtime = await compose(config, options);
  const api = await createOpenApi(runtime.operations, runtime.ports);
  const app = createApp(runtime.ports, api);
  const server = createServer(app.callback());
  applyServerTimeouts(server, config.http, runtime.logger);
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
    runtime,
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
    },
  };
}
