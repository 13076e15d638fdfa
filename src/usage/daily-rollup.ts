import type { Db } from '../storage/index.js';
import type { UsageTotals } from './types.js';

const DAY_MS = 86_400_000;

/** One row of the rollup: an account's usage on one UTC day for one model ('' for requests without one). */
export interface DailyUsage extends UsageTotals {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  model: string;
}

/**
 * Reads the daily usage rollup (table `usage_daily`, kept by SqlUsageStore as it writes usage rows) per
 * UTC day and model, for charts: at most days × models rows, never the raw rows of the period.
 */
export class DailyUsageRollup {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The account's rollup rows for the UTC days that `start` and `end` (exclusive) touch, oldest first. */
  async days(accountId: string, start: number, end: number): Promise<DailyUsage[]> {
    const rows = await this.#db.query(
      `SELECT day, model, requests, credits, prompt_tokens, completion_tokens FROM usage_daily
        WHERE account_id = $1 AND day >= $2 AND day < $3 ORDER BY day, model`,
      [accountId, start - (start % DAY_MS), end],
    );
    return rows.map((row) => ({
      day: new Date(Number(row.day)).toISOString().slice(0, 10),
      model: String(row.model),
      requests: Number(row.requests),
      credits: Number(row.credits),
      promptTokens: Number(row.prompt_tokens),
      completionTokens: Number(row.completion_tokens),
    }));
  }
}
