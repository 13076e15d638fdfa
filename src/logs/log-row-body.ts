import type { Schema } from '../http/index.js';
import type { RequestLogRow } from './types.js';

/** The id the contract shows and `after` takes back: the row's own id, prefixed. */
export function logId(id: number): string {
  return `log_${id}`;
}

/** `log_<n>` back to n; undefined for anything else. */
export function parseLogId(text: string): number | undefined {
  const match = /^log_([1-9][0-9]{0,15})$/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** A row as the contract's `RequestLog`. */
export function requestLogBody(r: RequestLogRow): Schema<'RequestLog'> {
  return {
    object: 'request_log',
    id: logId(r.id),
    request_id: r.requestId,
    created_at: new Date(r.createdAt).toISOString(),
    key: r.keyId === null ? null : { id: r.keyId, prefix: r.keyPrefix, name: r.keyName },
    user_id: r.userId,
    endpoint: r.endpoint,
    model: r.model,
    status: r.status,
    failed_status: r.failedStatus,
    error_code: r.errorCode,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    credits: r.credits,
    latency_ms: r.latencyMs,
    cached: r.cached,
    content: r.content,
  };
}
