import { AppError } from '../errors/index.js';
import type { ChatMessage, ToolCall } from '../providers/index.js';
import type { McpApproval } from './input.js';

/** The id prefix of an `mcp_approval_request`: the waiting call takes that id in the stored conversation. */
export const APPROVAL_PREFIX = 'mcpr';

/** A call of the chain's last turn that waited for the client, with the client's answer (none: not approved). */
export interface PendingApproval {
  call: ToolCall;
  approve: boolean;
  reason?: string;
}

/**
 * The MCP calls the conversation holds unanswered (a response ended asking to approve them), each with the
 * request's `mcp_approval_response` to it. One naming no such call is 400; a waiting call the request does not
 * answer counts as declined, so the conversation never reaches the model with a call left open.
 */
export function pendingApprovals(
  history: readonly ChatMessage[],
  approvals: readonly McpApproval[],
): PendingApproval[] {
  const answered = new Set(history.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  const waiting = history
    .flatMap((m) => m.tool_calls ?? [])
    .filter((c) => c.id.startsWith(`${APPROVAL_PREFIX}_`) && !answered.has(c.id));
  const ids = new Set(waiting.map((c) => c.id));
  for (const approval of approvals) {
    if (!ids.has(approval.requestId)) {
      throw new AppError(
        'INVALID_PARAMETER',
        `${approval.field}.approval_request_id ${approval.requestId} names no mcp_approval_request waiting in previous_response_id`,
        { field: `${approval.field}.approval_request_id`, reason: 'names no waiting mcp_approval_request' },
      );
    }
  }
  return waiting.map((call) => {
    const answer = approvals.findLast((a) => a.requestId === call.id);
    return { call, approve: answer?.approve === true, ...(answer?.reason ? { reason: answer.reason } : {}) };
  });
}

/** What the model reads of a call the client did not approve. */
export function declinedText(pending: PendingApproval): string {
  return `The user did not approve this call; it was not run.${pending.reason ? ` Their reason: ${pending.reason}` : ''}`;
}
