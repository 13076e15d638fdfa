import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time comparison of two secrets of possibly different lengths. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
