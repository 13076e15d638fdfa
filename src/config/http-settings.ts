import type { Config } from './schema.js';

/** The HTTP layer's settings, as its ports take them: body limits and deadlines, CORS, the admin token. */
export function httpSettings(config: Config) {
  return {
    bodyLimitBytes: config.bodyLimitBytes,
    maxJsonDepth: config.http.maxJsonDepth,
    bodyIdleTimeoutMs: config.http.bodyIdleTimeoutMs,
    streamWriteTimeoutMs: config.http.streamWriteTimeoutMs,
    corsOrigins: config.cors.origins,
    adminToken: config.adminToken,
  };
}
