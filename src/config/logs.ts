import { z } from 'zod';
import { numberVariable, sectionFromEnv } from './env-section.js';

/**
 * Request logs and the access log. `retentionDays`: how long an account's request logs are kept (PVAI_LOGS_RETENTION_DAYS);
 * `access`: one JSON line per request on stdout (PVAI_ACCESS_LOG, `true`/`false`), at `info`, so `logLevel` above
 * `info` silences it as well.
 */
export const logsSchema = z
  .object({
    retentionDays: z.number().int().min(1).max(3650).default(30),
    access: z.boolean().default(true),
  })
  .strict()
  .default({ retentionDays: 30, access: true });

const VARIABLES = {
  PVAI_LOGS_RETENTION_DAYS: numberVariable('retentionDays', /^\d+$/, 'a whole number of days'),
  PVAI_ACCESS_LOG: {
    field: 'access',
    expected: 'true or false',
    read: (text: string) => {
      const word = text.toLowerCase();
      return word === 'true' ? true : word === 'false' ? false : undefined;
    },
  },
};

/** PVAI_LOGS_RETENTION_DAYS and PVAI_ACCESS_LOG over the file's `logs` object; a bad value names its variable. */
export function logsFromEnv(
  env: Record<string, string | undefined>,
  file: unknown,
  fail: (message: string) => Error,
): Record<string, unknown> | undefined {
  return sectionFromEnv(env, file, VARIABLES, fail);
}
