export { checkKeyModel } from './key-models.js';
export { ModelNames } from './model-names.js';
export { TierPolicy } from './policy.js';
export { DEFAULT_TIER_RULES, type TierRules } from './rules.js';
