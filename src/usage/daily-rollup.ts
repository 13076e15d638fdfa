import type { Db } from '../storage/index.js';
import type { UsageRecord, UsageStore, UsageTotals } from './types.js';

const DAY_MS = 86_400_000;

/** One row of the rollup: an account's usage on one UTC day for one model ('' for requests without one). */
export interface DailyUsage extends UsageTotals {
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  model: string;
}

/**
 * The daily usage rollup (table `usage_daily`): per account, UTC day and model, the sums of the usage
 * rows. It is added to as rows are written (one upsert per account, day and model of a batch), so a
 * dashboard chart reads at most days × models rows, never the raw rows of the period.
 */
export class DailyUsageRollup {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Adds a batch of usage rows to the rollup. */
  async add(rows: readonly UsageRecord[]): Promise<void> {
    const sums = new Map<string, { accountId: string; day: number; model: string } & UsageTotals>();
    for (const r of rows) {
      const day = r.createdAt - (r.createdAt % DAY_MS);
      const model = r.model ?? '';
      const key = `${r.accountId}\u0000${day}\u0000${model}`;
      let sum = sums.get(key);
      if (!sum) {
        sum = { accountId: r.accountId, day, model, requests: 0, credits: 0, promptTokens: 0, completionTokens: 0 };
        sums.set(key, sum);
      }
      sum.requests += 1;
      sum.credits += r.credits;
      sum.promptTokens += r.promptTokens;
      sum.completionTokens += r.completionTokens;
    }
    for (const s of sums.values()) {
      await this.#db.query(
        `INSERT INTO usage_daily (account_id, day, model, requests, credits, prompt_tokens, completion_tokens)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (account_id, day, model) DO UPDATE SET
           requests = usage_daily.requests + excluded.requests,
           credits = usage_daily.credits + excluded.credits,
           prompt_tokens = usage_daily.prompt_tokens + excluded.prompt_tokens,
           completion_tokens = usage_daily.completion_tokens + excluded.completion_tokens`,
        [s.accountId, s.day, s.model, s.requests, s.credits, s.promptTokens, s.completionTokens],
      );
    }
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

type BatchStore = UsageStore & { recordMany(rows: UsageRecord[]): Promise<void> };

/** The usage store with the daily rollup kept up to date: every batch written is then added to it. */
export function withDailyRollup(inner: BatchStore, rollup: DailyUsageRollup): BatchStore {
  return {
    record: (row) => inner.record(row).then(() => rollup.add([row])),
    recordMany: async (rows) => {
      await inner.recordMany(rows);
      await rollup.add(rows);
    },
    totals: (accountId, start, end) => inner.totals(accountId, start, end),
    series: (accountId, start, end, groupBy) => inner.series(accountId, start, end, groupBy),
    flush: () => inner.flush(),
  };
}
