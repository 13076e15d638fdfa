export { httpSettings } from './http-settings.js';
export { ConfigError, loadConfig } from './load.js';
export { routeReadsImages, routeTemperature, type TargetConfig } from './routing.js';
export type { Config, RawConfig } from './schema.js';
