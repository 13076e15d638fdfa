import type OpenAI from 'openai';
import type { Clock } from '../../src/clock/index.js';
import type { RawConfig } from '../../src/config/index.js';
import type { Backend } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { openaiClient } from '../support/openai-client.js';
import { type Response, startTestServer, type TestServer } from '../support/server.js';

/** A chat message as pvai sent it to the upstream. */
export interface UpstreamMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
}

/** A chat-completions request as the upstream received it. */
export interface UpstreamBody {
  model: string;
  stream?: boolean;
  max_tokens?: number;
  messages: UpstreamMessage[];
  tools?: Array<{ type: string; function: { name: string; parameters?: Record<string, unknown> } }>;
  tool_choice?: unknown;
  response_format?: unknown;
}

/** The chat requests the upstream received (embedding requests left out), oldest first. */
export function chatRequests(upstream: MockUpstream): UpstreamBody[] {
  return upstream.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as UpstreamBody);
}

/** The system messages of a chat request, joined. */
export function systemText(body: UpstreamBody | undefined): string {
  return (body?.messages ?? [])
    .filter((m) => m.role === 'system')
    .map((m) => m.content ?? '')
    .join('\n');
}

export interface Annotation {
  type: string;
  file_id?: string;
  filename?: string;
  index?: number;
  page?: number | null;
  char_start?: number;
  char_end?: number;
  url?: string;
  title?: string;
  start_index?: number;
  end_index?: number;
}

export interface OutputItem {
  id: string;
  type: string;
  status: string;
  role?: string;
  content?: Array<{ type: string; text: string; annotations: Annotation[] }>;
  call_id?: string;
  name?: string;
  arguments?: string;
  queries?: string[];
  results?: Array<{ file_id: string; filename: string; score: number; text: string }> | null;
  action?: { type: string; query: string; sources?: Array<{ type: string; url: string }> };
  code?: string | null;
  outputs?: Array<{ type: string; logs: string }> | null;
}

/** The response object as pvai returns it (JSON, a stored one, or a stream's last event). */
export interface ResponseBody {
  id: string;
  object: string;
  status: string;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  previous_response_id: string | null;
  output: OutputItem[];
  usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } } | null;
  user_id: string;
}

export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  error: { code: string; message: string; param?: string | null };
}

/** The text of the message items of an output, joined. */
export function outputText(body: { output: OutputItem[] }): string {
  return body.output
    .filter((o) => o.type === 'message')
    .flatMap((o) => o.content ?? [])
    .map((c) => c.text)
    .join('');
}

export interface ServerEvent {
  /** The SSE `event:` line. */
  event: string;
  data: { type: string; sequence_number: number; [field: string]: unknown };
}

/** A Server-Sent-Events body read into its events (`event:` and JSON `data:`). */
export function sseEvents(text: string): ServerEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? '';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) as ServerEvent['data'] };
    });
}

/** POST /z1/responses with `stream: true` over plain fetch: the status, headers and events. */
export async function streamResponse(server: TestServer, apiKey: string, body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/z1/responses`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const text = await res.text();
  const streamed = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  return { status: res.status, headers: res.headers, text, events: streamed ? sseEvents(text) : [] };
}

export interface ResponsesHarness {
  upstream: MockUpstream;
  server: TestServer;
  apiKey: string;
  accountId: string;
  /** The official SDK on pvai's /z1 (every JSON answer checked against the contract). */
  client: OpenAI;
  /** POST /z1/responses as JSON, checked against the contract. */
  create<T = ResponseBody & ErrorBody>(body: Record<string, unknown>, apiKey?: string): Promise<Response<T>>;
  close(): Promise<void>;
}

/**
 * A test server whose PV-TURBO answers from a mock OpenAI upstream on loopback (its answers scripted, its
 * requests recorded), and one account of `tier` with `credits`.
 */
export async function startResponses(
  backend: Backend,
  options: {
    config?: RawConfig;
    defaultText?: string;
    tier?: 'free' | 'startup' | 'business';
    credits?: number;
    clock?: Clock;
  } = {},
): Promise<ResponsesHarness> {
  const upstream = await startMockUpstream(options.defaultText ? { defaultText: options.defaultText } : {});
  const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'up', maxRetries: 0 };
  let server: TestServer;
  try {
    server = await startTestServer(backend, {
      ...(options.clock ? { clock: options.clock } : {}),
      config: {
        tiers: { free: { rpm: 10_000 }, startup: { rpm: 10_000 }, business: { rpm: 10_000 } },
        routing: { 'PV-TURBO': [target] },
        ...options.config,
      },
    });
  } catch (err) {
    await upstream.close();
    throw err;
  }
  const { apiKey, accountId } = await server.createAccount(options.tier ?? 'business', options.credits ?? 10_000);
  return {
    upstream,
    server,
    apiKey,
    accountId,
    client: openaiClient(server.url, apiKey),
    create: <T>(body: Record<string, unknown>, key = apiKey) =>
      server.request<T>('POST', '/z1/responses', { apiKey: key, body }),
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}
