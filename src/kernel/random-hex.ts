import { randomFillSync } from 'node:crypto';

/** 256 ids' worth of entropy, drawn from the CSPRNG at once (what randomUUID does inside too). */
const POOL_IDS = 256;
const pool = Buffer.allocUnsafe(16 * POOL_IDS);
let next = POOL_IDS;

/**
 * 128 random bits as 32 lower-case hex digits, for ids on every request (request, completion and Responses ids).
 * One string made by Buffer's native hex encoder: randomUUID() builds its 36 characters from 20 pieces
 * and the dashes were then cut out again, ~0.9 KB of short strings a chat request (bench:chat heap profile).
 */
export function randomHex128(): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const at = 16 * next++;
  return pool.toString('hex', at, at + 16);
}
