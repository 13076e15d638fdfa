export { ConfigError, loadConfig } from './load.js';
export { DEFAULT_LOCAL_MAX_TOKENS, PV_MODELS, type TargetConfig } from './routing.js';
export type { Config, RawConfig } from './schema.js';
export { DEFAULT_TIER_RULES, isTier, TIERS, type Tier, type TierRules } from './tiers.js';
