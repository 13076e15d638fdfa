import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Histogram slots per row: src/sla/histogram.ts's 13 bounds and the overflow slot. */
const SLOTS = 14;

/**
 * SLA buckets: one row per account, resolution (minute, hour, day), bucket start, endpoint and model,
 * holding sums only (requests, errors, latency and time-to-first-token histograms with fixed bounds), so
 * writers add to a row with an upsert and replicas' counts sum. Pruned by resolution and age.
 */
export class Sla1764200000000 implements MigrationInterface {
  name = 'Sla1764200000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    const summed = [
      'requests',
      'errors',
      'upstream_errors',
      'timeouts',
      'latency_sum_ms',
      'ttft_count',
      'ttft_sum_ms',
      ...Array.from({ length: SLOTS }, (_, i) => `lat_${i}`),
      ...Array.from({ length: SLOTS }, (_, i) => `ttft_${i}`),
    ];
    await runner.query(`CREATE TABLE sla_buckets (
      account_id TEXT NOT NULL,
      resolution TEXT NOT NULL,
      bucket_start ${bigint} NOT NULL,
      endpoint TEXT NOT NULL,
      model TEXT NOT NULL,
      ${summed.map((c) => `${c} ${bigint} NOT NULL DEFAULT 0`).join(',\n      ')},
      PRIMARY KEY (account_id, resolution, bucket_start, endpoint, model)
    )`);
    await runner.query('CREATE INDEX sla_buckets_age ON sla_buckets (resolution, bucket_start)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE sla_buckets');
  }
}
