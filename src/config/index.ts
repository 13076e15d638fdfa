export { ConfigError, loadConfig } from './load.js';
export type { TargetConfig } from './routing.js';
export type { Config, RawConfig } from './schema.js';
