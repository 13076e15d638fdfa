/**
 * The shared kernel: the few types every layer speaks (who is calling, the tiers, the PV model ids, the embedding model's id).
 * It imports nothing of the product; the HTTP layer and every capability may import it.
 */
export { untilAborted } from './abort.js';
export { type AttributeFilter, matchesFilter, readAttributeFilter } from './attribute-filter.js';
export { forkModule, serveParent, siblingModule } from './child-module.js';
export { addressBucket } from './client-address.js';
export { type Charged, type ChargeNote, type CreditRefund, type CreditsPort, type Payer, payerOf } from './credits.js';
export { EMBEDDING_MODEL_ID, isModelId, MODEL_IDS, type ModelId } from './models.js';
export type {
  Account,
  ApiKeyRecord,
  KeyBudget,
  KeyBudgetPeriod,
  KeyRateLimits,
  Principal,
} from './principal.js';
export { randomHex128 } from './random-hex.js';
export { secretsEqual } from './secrets.js';
export { SlotList } from './slot-list.js';
export { isTier, TIERS, type Tier } from './tiers.js';
