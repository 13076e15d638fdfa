import { z } from 'zod';

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

type Env = Record<string, string | undefined>;

/** PVAI_LOGS_RETENTION_DAYS and PVAI_ACCESS_LOG over the file's `logs` object; a bad value names its variable. */
export function logsFromEnv(
  env: Env,
  file: unknown,
  fail: (message: string) => Error,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = file && typeof file === 'object' ? { ...(file as object) } : {};
  let any = file !== undefined;
  const days = env.PVAI_LOGS_RETENTION_DAYS?.trim();
  if (days) {
    if (!/^\d+$/.test(days)) throw fail(`PVAI_LOGS_RETENTION_DAYS: must be a whole number of days, got "${days}"`);
    out.retentionDays = Number(days);
    any = true;
  }
  const access = env.PVAI_ACCESS_LOG?.trim().toLowerCase();
  if (access) {
    if (access !== 'true' && access !== 'false') throw fail(`PVAI_ACCESS_LOG: must be true or false, got "${access}"`);
    out.access = access === 'true';
    any = true;
  }
  return any ? out : undefined;
}
