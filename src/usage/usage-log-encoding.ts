import type { UsageRecord } from './types.js';

/**
 * A usage row as the staging log holds it: the values its write reads, in a row (the latency already rounded
 * as the table stores it). Logged as the record object it was, a bench:chat row took 341 bytes of JSON, most of
 * them key names, and 0.58 µs to stringify; as a row 180 bytes and 0.24–0.26 µs (measured on batches of 450,
 * the 50 ms batch at ~9,000 req/s). The log's pages go through the WAL like any table's: half the bytes, half
 * their frames.
 */
export type LoggedUsage = [
  accountId: string,
  keyId: string | null,
  requestId: string,
  endpoint: string,
  model: string | null,
  status: number,
  promptTokens: number,
  completionTokens: number,
  credits: number,
  latencyMs: number,
  cached: boolean,
  createdAt: number,
  userId: string | null,
];

/** Also the row's parameters in the usage table's column order (PostgreSQL's; SQLite's are pushed in place). */
export function logUsage(r: UsageRecord): LoggedUsage {
  return [
    r.accountId,
    r.keyId,
    r.requestId,
    r.endpoint,
    r.model,
    r.status,
    r.promptTokens,
    r.completionTokens,
    r.credits,
    Math.round(r.latencyMs),
    r.cached,
    r.createdAt,
    r.userId ?? null,
  ];
}

/** A logged row back; an object is a row logged before the log had this encoding, as it was. */
export function usageFromLog(logged: unknown): UsageRecord {
  if (!Array.isArray(logged)) return logged as UsageRecord;
  const row = logged as LoggedUsage;
  return {
    accountId: row[0],
    keyId: row[1],
    requestId: row[2],
    endpoint: row[3],
    model: row[4],
    status: row[5],
    promptTokens: row[6],
    completionTokens: row[7],
    credits: row[8],
    latencyMs: row[9],
    cached: row[10],
    createdAt: row[11],
    userId: row[12],
  };
}
