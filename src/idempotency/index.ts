/**
 * Idempotency-Key: the claim of a key, the replay of its answer, its records' window and their erase
 * (capability.ts).
 */
export { idempotencyCapability } from './capability.js';
