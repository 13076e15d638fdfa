/**
 * Request logs an account holder reads: one row per authenticated request, kept for the configured days,
 * erased with the end user they name.
 */
export { logsCapability } from './capability.js';
export { AnswerText, conversationText } from './content-text.js';
export { logId, parseLogId } from './log-row-body.js';
export type { SqlRequestLogStore } from './sql-request-log-store.js';
export type { LogCursor, RequestLogFilter, RequestLogRow } from './types.js';
