import type pg from 'pg';
import type { AdmissionCounts, Limits, RateLimitStore } from '../types.js';
import { utcDayStart, utcMonthStart } from '../windows.js';

/**
 * Admission in one round trip: the `pvai_admit` function (see the initial migration) under an advisory lock. It
 * states `admission-rule.ts`'s rule in SQL; test/limits/admission-rule-parity.test.ts holds the two to one table.
 */
export class PostgresRateLimitStore implements RateLimitStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async close(): Promise<void> {
    // Nothing pending: every admission was committed by its own round trip.
  }

  admit(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts> {
    return this.#call(accountId, limits, now, true);
  }

  peek(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts> {
    return this.#call(accountId, limits, now, false);
  }

  async #call(accountId: string, limits: Limits, now: number, consume: boolean): Promise<AdmissionCounts> {
    const result = await this.#pool.query({
      name: 'pvai_admit',
      text: 'SELECT * FROM pvai_admit($1, $2, $3, $4, $5, $6, $7, $8)',
      values: [accountId, now, limits.rpm, limits.rpd, limits.monthly, utcDayStart(now), utcMonthStart(now), consume],
    });
    const row = result.rows[0] as {
      admitted: boolean;
      minute_count: number;
      minute_oldest: number | null;
      day_count: number;
      month_count: number;
    };
    return {
      admitted: row.admitted,
      minuteCount: row.minute_count,
      minuteOldest: row.minute_oldest === null ? null : Number(row.minute_oldest),
      dayCount: row.day_count,
      monthCount: row.month_count,
    };
  }
}
