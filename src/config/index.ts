export { ConfigError, loadConfig } from './load.js';
export { PV_MODELS, type TargetConfig } from './routing.js';
export type { Config, RawConfig } from './schema.js';
export { DEFAULT_TIER_RULES, isTier, TIERS, type Tier, type TierRules } from './tiers.js';
