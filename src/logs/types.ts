import type { RequestRecord } from '../http/index.js';

/** One request as its log row keeps it: the record the HTTP layer hands every capability (http/ports.ts). */
export type LoggedRequest = RequestRecord;

/** A stored log row, as the account reads it. */
export interface RequestLogRow {
  id: number;
  requestId: string;
  createdAt: number;
  keyId: string | null;
  keyPrefix: string | null;
  keyName: string | null;
  userId: string | null;
  endpoint: string;
  model: string | null;
  status: number;
  failedStatus: number | null;
  errorCode: string | null;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  latencyMs: number;
  cached: boolean;
  /** Null unless the account kept the text of this request (`log_content`). */
  content: { input: string | null; output: string | null; truncated: boolean } | null;
}

/** What a listing keeps: every field optional; `userId` is also how a key bound to an end user is held to them. */
export interface RequestLogFilter {
  keyId?: string | undefined;
  userId?: string | undefined;
  status?: number | undefined;
  errorsOnly?: boolean | undefined;
  model?: string | undefined;
  /** Inclusive, ms. */
  start?: number | undefined;
  /** Exclusive, ms. */
  end?: number | undefined;
}

/** The entry a page goes on after: the newest-first order is (created_at, id) descending. */
export interface LogCursor {
  createdAt: number;
  id: number;
}

/** An end user of an account. */
export interface LogTenant {
  accountId: string;
  userId: string;
}
