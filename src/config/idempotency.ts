import { z } from 'zod';
import { numberVariable, sectionFromEnv } from './env-section.js';

/**
 * Idempotency-Key (src/idempotency/). `windowHours`: how long a key's record and stored answer are kept
 * (PVAI_IDEMPOTENCY_WINDOW_HOURS, 24); `maxResponseBytes`: the largest answer kept for replay
 * (PVAI_IDEMPOTENCY_MAX_RESPONSE_BYTES, 1 MiB); `waitSeconds`: how long a duplicate waits for the request that
 * holds its key before 409 IDEMPOTENCY_KEY_IN_USE (PVAI_IDEMPOTENCY_WAIT_SECONDS, 10); `leaseSeconds`: how long a
 * running request's claim lasts without renewal (renewed while it runs) before a retry may take it over as
 * abandoned (its process died).
 */
export const idempotencySchema = z
  .object({
    windowHours: z
      .number()
      .min(0.001)
      .max(24 * 30)
      .default(24),
    maxResponseBytes: z
      .number()
      .int()
      .min(0)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    waitSeconds: z.number().min(0).max(600).default(10),
    leaseSeconds: z.number().min(1).max(3600).default(30),
  })
  .strict()
  .default({ windowHours: 24, maxResponseBytes: 1024 * 1024, waitSeconds: 10, leaseSeconds: 30 });

const NON_NEGATIVE = /^\d+(\.\d+)?$/;
const VARIABLES = {
  PVAI_IDEMPOTENCY_WINDOW_HOURS: numberVariable('windowHours', NON_NEGATIVE, 'a non-negative number'),
  PVAI_IDEMPOTENCY_MAX_RESPONSE_BYTES: numberVariable('maxResponseBytes', NON_NEGATIVE, 'a non-negative number'),
  PVAI_IDEMPOTENCY_WAIT_SECONDS: numberVariable('waitSeconds', NON_NEGATIVE, 'a non-negative number'),
  PVAI_IDEMPOTENCY_LEASE_SECONDS: numberVariable('leaseSeconds', NON_NEGATIVE, 'a non-negative number'),
};

/** The PVAI_IDEMPOTENCY_* variables over the file's `idempotency` object; a bad value names its variable. */
export function idempotencyFromEnv(
  env: Record<string, string | undefined>,
  file: unknown,
  fail: (message: string) => Error,
): Record<string, unknown> | undefined {
  return sectionFromEnv(env, file, VARIABLES, fail);
}
