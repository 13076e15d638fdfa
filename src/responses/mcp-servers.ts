import { AppError } from '../errors/index.js';
import type { ResponseCreateBody } from './types.js';

type Tool = NonNullable<ResponseCreateBody['tools']>[number];

/** What an `mcp` tool of a request names: a server, what of it the model may use, and what needs approval. */
export interface McpServerSpec {
  label: string;
  /** An http(s) URL, or `pvai` (pvai's own tools, in process). */
  url: string;
  /** Sent to that server only, with each of its requests. */
  headers: Record<string, string>;
  /** The tools offered to the model (undefined: every tool the server lists). */
  allowed?: ReadonlySet<string>;
  /** Whether a call of the tool waits for the client's `mcp_approval_response`. */
  needsApproval(tool: string): boolean;
}

/** Headers a request may not set for a server: the connection's own, and what would re-aim it. */
const RESERVED_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'upgrade',
  'keep-alive',
  'te',
  'trailer',
  'proxy-authorization',
  'mcp-session-id',
  'mcp-protocol-version',
  'accept',
  'content-type',
]);

function bad(field: string, reason: string, message = `${field} ${reason}`): AppError {
  return new AppError('INVALID_PARAMETER', message, { field, reason });
}

function toolNames(value: unknown): string[] | undefined {
  if (Array.isArray(value)) return value as string[];
  const names = (value as { tool_names?: unknown } | null | undefined)?.tool_names;
  return Array.isArray(names) ? (names as string[]) : undefined;
}

/** `require_approval`: `always` (the default, as OpenAI's), `never`, or per tool (`never.tool_names` spared). */
function approvalRule(value: Tool['require_approval']): (tool: string) => boolean {
  if (value === undefined || value === null || value === 'always') return () => true;
  if (value === 'never') return () => false;
  const never = new Set(toolNames(value.never) ?? []);
  const always = new Set(toolNames(value.always) ?? []);
  // A tool named in neither list is asked about: approval is the default.
  return (tool) => always.has(tool) || !never.has(tool);
}

/** A request's `mcp` tool, read and checked (nothing is connected to here). */
export function readMcpTool(tool: Tool, field: string, taken: ReadonlySet<string>): McpServerSpec {
  if (tool.connector_id !== undefined) {
    throw bad(`${field}.connector_id`, 'names a connector; pvai has none: give server_url');
  }
  const label = tool.server_label;
  if (!label) throw bad(`${field}.server_label`, 'is required');
  if (taken.has(label)) throw bad(`${field}.server_label`, `${label} names another mcp tool of the request too`);
  const url = tool.server_url;
  if (!url) throw bad(`${field}.server_url`, 'is required');
  if (url !== 'pvai') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw bad(`${field}.server_url`, 'must be an http or https URL, or pvai');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw bad(`${field}.server_url`, 'must be an http or https URL, or pvai');
    }
    if (parsed.username || parsed.password) {
      throw bad(`${field}.server_url`, 'must not carry credentials: give them in headers');
    }
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(tool.headers ?? {})) {
    const lower = name.toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower)) throw bad(`${field}.headers`, `${name} is not a header name`);
    if (RESERVED_HEADERS.has(lower)) throw bad(`${field}.headers.${name}`, 'is set by pvai, not by the request');
    if (/[\r\n\0]/.test(value)) throw bad(`${field}.headers.${name}`, 'must not hold a line break or NUL');
    headers[lower] = value;
  }
  if (url === 'pvai' && Object.keys(headers).length > 0) {
    throw bad(`${field}.headers`, 'go to a remote server; pvai’s own tools take the request’s key');
  }
  const allowed = toolNames(tool.allowed_tools);
  return {
    label,
    url,
    headers,
    ...(allowed ? { allowed: new Set(allowed) } : {}),
    needsApproval: approvalRule(tool.require_approval),
  };
}
