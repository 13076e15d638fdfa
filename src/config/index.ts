export { ConfigError, loadConfig } from './load.js';
export { DEFAULT_LOCAL_MAX_TOKENS, routeReadsImages, routeTemperature, type TargetConfig } from './routing.js';
export type { Config, RawConfig } from './schema.js';
