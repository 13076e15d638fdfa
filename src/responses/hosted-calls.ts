import type { ChatCompletionRequest } from '../chat/index.js';
import type { Principal } from '../kernel/index.js';
import type { ChatMessage, ToolCall } from '../providers/index.js';
import type { CodeRunner } from '../sandbox/index.js';
import { TRACING, traced } from '../tracing/index.js';
import { CODE_TOOL_NAME, codeOf, runCode } from './code-interpreter.js';
import { newId } from './input.js';
import { APPROVAL_PREFIX, declinedText } from './mcp-approvals.js';
import { type McpConnectorPort, McpToolbox } from './mcp-toolbox.js';
import { codeItem } from './output.js';
import type { PreparedResponse } from './prepare.js';
import type { OutputItem } from './types.js';

/** What a response's hosted calls (code, MCP tools) read and add to: its output, conversation and count of runs. */
export interface HostedState {
  output: OutputItem[];
  conversation: ChatMessage[];
  /** Calls pvai ran (code and MCP tools together), against `max_tool_calls`. */
  hostedRuns: number;
  mcp: McpToolbox | undefined;
}

/** Whether pvai runs the call (the sandbox, an MCP server's tool) rather than the client. */
export function hostedCall(name: string, mcp: McpToolbox | undefined): boolean {
  return name === CODE_TOOL_NAME || mcp?.owns(name) === true;
}

/** The start of a response with hosted tools: its first request, conversation and items, and its MCP toolbox. */
export interface Opened {
  request: ChatCompletionRequest;
  conversation: ChatMessage[];
  items: OutputItem[];
  mcp: McpToolbox | undefined;
}

/**
 * Before the first model call: the MCP servers the chain has not listed are listed (`mcp_list_tools` items), their
 * tools added to the chat's, and the calls the client approved in this request run (`mcp_call` items); a call it
 * declined, or did not answer, is told to the model as not run. Their answers go right after the history, where the
 * calls are.
 */
export async function openHosted(
  p: PreparedResponse,
  connector: McpConnectorPort | undefined,
  principal: Principal,
  signal: AbortSignal,
): Promise<Opened> {
  const chat = p.plan.chat;
  const opened: Opened = { request: chat, conversation: [...p.plan.conversation], items: [], mcp: undefined };
  if (!connector || (p.plan.mcp.length === 0 && p.mcp.pending.length === 0)) return opened;
  const mcp = new McpToolbox(connector, { principal, userId: p.tenant.userId });
  opened.mcp = mcp;
  const reserved = new Set([CODE_TOOL_NAME, ...(chat.tools ?? []).map((t) => t.function.name)]);
  opened.items = await mcp.open(p.plan.mcp, p.mcp.listed, reserved, signal);
  const answers: ChatMessage[] = [];
  for (const pending of p.mcp.pending) {
    if (!pending.approve) {
      answers.push({ role: 'tool', tool_call_id: pending.call.id, content: declinedText(pending) });
      continue;
    }
    const ran = await (TRACING.on
      ? executeTool(pending.call, () => mcp.call(pending.call, pending.call.id, signal))
      : mcp.call(pending.call, pending.call.id, signal));
    opened.items.push(ran.item);
    answers.push({ role: 'tool', tool_call_id: pending.call.id, content: ran.text });
  }
  const history = p.plan.conversation.slice(0, p.historyLength);
  opened.conversation = [...history, ...answers, ...p.plan.conversation.slice(p.historyLength)];
  const system = chat.messages.slice(0, chat.messages.length - p.plan.conversation.length);
  const tools = [...(chat.tools ?? []), ...mcp.functions];
  const { tool_choice: choice, tools: _, ...rest } = chat;
  opened.request = {
    ...rest,
    messages: [...system, ...opened.conversation],
    ...(tools.length > 0 ? { tools } : {}),
    // A choice with no tool left to make it (every server failed to list) is no choice.
    ...(choice !== undefined && tools.length > 0 ? { tool_choice: choice } : {}),
  };
  return opened;
}

/**
 * A call that needs the client's approval takes the approval request's id before the turn is stored: the next
 * request's `mcp_approval_response` names it, and finds it waiting in the conversation (mcp-approvals.ts). A copy:
 * the model's answer itself (which the response cache may hold) keeps the id the model gave.
 */
export function withApprovalId(call: ToolCall, mcp: McpToolbox | undefined): ToolCall {
  if (call.function.name === CODE_TOOL_NAME || !mcp?.needsApproval(call.function.name)) return call;
  return { ...call, id: newId(APPROVAL_PREFIX) };
}

/**
 * Runs a round's hosted calls in order, within `max_tool_calls`: code in the sandbox, MCP tools on their servers
 * (an `mcp_approval_request` for one that needs approval). Each call's item goes into the output and its answer
 * into the conversation. Returns whether the response stops here (a limit reached, or a call waiting for approval).
 */
export async function runHostedCalls(
  sandbox: CodeRunner,
  p: PreparedResponse,
  run: HostedState,
  calls: readonly ToolCall[],
  signal: AbortSignal,
): Promise<{ stop: boolean }> {
  let limited = false;
  let waiting = false;
  for (const call of calls) {
    if (call.id.startsWith(`${APPROVAL_PREFIX}_`) && run.mcp) {
      run.output.push(run.mcp.approvalItem(call, call.id));
      waiting = true;
      continue;
    }
    // Past max_tool_calls a call is not run; the model and the client are told so, and the conversation
    // stays whole (every call answered).
    limited ||= run.hostedRuns >= p.plan.maxToolCalls;
    const notRun = `[not run: max_tool_calls (${p.plan.maxToolCalls}) reached]`;
    if (call.function.name === CODE_TOOL_NAME) {
      const source = codeOf(call.function.arguments);
      const limits = { timeoutSeconds: p.codeTimeoutSeconds, accountId: p.tenant.accountId };
      const ran = limited
        ? { code: source, logs: notRun, status: 'incomplete' as const }
        : await (TRACING.on
            ? executeTool(call, () => runCode(sandbox, source, limits, signal))
            : runCode(sandbox, source, limits, signal));
      run.output.push(codeItem(newId('ci'), ran, source));
      run.conversation.push({ role: 'tool', tool_call_id: call.id, content: ran.logs || '(the code printed nothing)' });
    } else if (run.mcp) {
      const mcp = run.mcp;
      const ran = limited
        ? mcp.notRun(call, notRun)
        : await (TRACING.on ? executeTool(call, () => mcp.call(call, null, signal)) : mcp.call(call, null, signal));
      run.output.push(ran.item);
      run.conversation.push({
        role: 'tool',
        tool_call_id: call.id,
        content: ran.text || '(the tool returned nothing)',
      });
    }
    if (!limited) run.hostedRuns++;
  }
  return { stop: limited || waiting };
}

/**
 * A hosted call in its span, by the GenAI conventions: `execute_tool {name}`, the tool's name and call id; its
 * arguments only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. Called only when TRACING.on.
 */
function executeTool<T>(call: ToolCall, run: () => Promise<T>): Promise<T> {
  const attributes: Record<string, string> = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.function.name,
    'gen_ai.tool.call.id': call.id,
    'gen_ai.tool.type': call.function.name === CODE_TOOL_NAME ? 'extension' : 'function',
  };
  if (TRACING.content) attributes['gen_ai.tool.call.arguments'] = call.function.arguments;
  return traced(`execute_tool ${call.function.name}`, attributes, run);
}
