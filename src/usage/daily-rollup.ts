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
 * Usage per UTC day and model for charts, summed from the hourly rollup (table `usage_hourly`, kept by
 * SqlUsageStore in the transaction that writes the usage rows): at most 24 × days × models rows are
 * read, never the raw rows of the period.
 */
export class DailyUsageRollup {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** The account's rollup rows for the UTC days that `start` and `end` (exclusive) touch, oldest first. */
  async days(accountId: string, start: number, end: number): Promise<DailyUsage[]> {
    const rows = await this.#db.query(
      `SELECT hour - (hour % ${DAY_MS}) AS day, model, sum(requests) AS requests, sum(credits) AS credits,
              sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens
         FROM usage_hourly WHERE account_id = $1 AND hour >= $2 AND hour < $3
        GROUP BY hour - (hour % ${DAY_MS}), model ORDER BY day, model`,
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
