import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/index.js';

/** What the tools reach: pvai's own services, for one end user of one account. */
export interface ToolPorts {
  /** The end user's documents, or (`vectorStoreIds`) those vector stores of the caller instead. */
  searchDocuments(
    userId: string,
    query: string,
    k: number,
    vectorStoreIds: readonly string[] | undefined,
  ): Promise<
    Array<{
      document_id: string;
      title: string;
      text: string;
      score: number;
      page: number | null;
      char_start: number;
      char_end: number;
    }>
  >;
  remember(userId: string, content: string): Promise<{ memory_id: string; content: string }>;
  recall(
    userId: string,
    query: string,
    k: number,
  ): Promise<Array<{ memory_id: string; content: string; score: number }>>;
  forget(userId: string, memoryId: string): Promise<void>;
  webSearch(query: string): Promise<Array<{ url: string; title: string; text: string; score: number }>>;
  /** The end user's documents, newest first, and one's extracted text (NOT_FOUND when it is not theirs). */
  listDocuments(
    userId: string,
  ): Promise<Array<{ document_id: string; title: string; content_type: string; status: string; size_bytes: number }>>;
  readDocument(userId: string, documentId: string): Promise<string>;
  runPython(
    code: string,
    timeoutSeconds: number | undefined,
  ): Promise<{
    output: string;
    error: string | null;
    execution_time_ms: number;
  }>;
}

/** The end user a call acts for: the key's bound one, else the request's `X-PV-User`. */
export interface ToolCaller {
  principal: Principal;
  userId: string | undefined;
}

/** A tool's answer: its structured output, and the same as JSON text for clients that read text only. */
function answer(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/**
 * A refusal the caller can act on (no end user, a memory that is not theirs, a timeout over the tier) is the
 * tool's error result, as MCP has tools report failures the model should see; anything else is the server's.
 */
async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return { isError: true, content: [{ type: 'text', text: `${err.code}: ${err.message}` }] };
  }
}

function endUser(caller: ToolCaller): string {
  if (caller.userId !== undefined) return caller.userId;
  throw new AppError('INVALID_PARAMETER', 'Name the end user with the X-PV-User header (or use a key bound to one)', {
    field: 'x-pv-user',
    reason: 'is required',
  });
}

const match = z.object({
  document_id: z.string(),
  title: z.string(),
  text: z.string(),
  score: z.number(),
  page: z.number().int().nullable(),
  char_start: z.number().int(),
  char_end: z.number().int(),
});

/** Registers pvai's tools on the server, each acting for the caller's end user. */
export function registerTools(server: McpServer, ports: ToolPorts, caller: ToolCaller): void {
  server.registerTool(
    'search_documents',
    {
      title: 'Search documents',
      description:
        "Searches the end user's documents, or the named vector stores instead (hybrid retrieval); each result has " +
        'its document (a vector store file: its file id and filename), page and character span.',
      inputSchema: {
        query: z.string().min(1).max(4096),
        k: z.number().int().min(1).max(100).optional(),
        vector_store_ids: z.array(z.string().min(1).max(64)).min(1).max(10).optional(),
      },
      outputSchema: { results: z.array(match) },
    },
    ({ query, k, vector_store_ids }) =>
      guarded(async () => {
        // A store is the account's (or its end user's), not only this end user's: no end user needed for one.
        const userId = vector_store_ids ? (caller.userId ?? '') : endUser(caller);
        return answer({ results: await ports.searchDocuments(userId, query, k ?? 5, vector_store_ids) });
      }),
  );
  server.registerTool(
    'web_search',
    {
      title: 'Web search',
      description:
        "Searches the web and reads the best pages (behind pvai's SSRF guard); passages ranked to the query.",
      inputSchema: { query: z.string().min(1).max(1024) },
      outputSchema: {
        results: z.array(z.object({ url: z.string(), title: z.string(), text: z.string(), score: z.number() })),
      },
    },
    ({ query }) => guarded(async () => answer({ results: await ports.webSearch(query) })),
  );
  server.registerTool(
    'remember',
    {
      title: 'Remember',
      description: 'Stores a memory for the end user.',
      inputSchema: { content: z.string().min(1).max(8192) },
      outputSchema: { memory_id: z.string(), content: z.string() },
    },
    ({ content }) => guarded(async () => answer(await ports.remember(endUser(caller), content))),
  );
  server.registerTool(
    'recall',
    {
      title: 'Recall',
      description: "The end user's memories most relevant to the query.",
      inputSchema: { query: z.string().min(1).max(4096), k: z.number().int().min(1).max(100).optional() },
      outputSchema: {
        memories: z.array(z.object({ memory_id: z.string(), content: z.string(), score: z.number() })),
      },
    },
    ({ query, k }) => guarded(async () => answer({ memories: await ports.recall(endUser(caller), query, k ?? 5) })),
  );
  server.registerTool(
    'forget',
    {
      title: 'Forget',
      description: 'Deletes one of the end user’s memories by id.',
      inputSchema: { memory_id: z.string().min(1).max(64) },
      outputSchema: { memory_id: z.string(), deleted: z.boolean() },
    },
    ({ memory_id }) =>
      guarded(async () => {
        await ports.forget(endUser(caller), memory_id);
        return answer({ memory_id, deleted: true });
      }),
  );
  server.registerTool(
    'run_python',
    {
      title: 'Run Python',
      description: "Runs Python in pvai's sandbox (no network), within the tier's timeout.",
      inputSchema: { code: z.string().min(1).max(100_000), timeout: z.number().int().min(1).max(120).optional() },
      outputSchema: { output: z.string(), error: z.string().nullable(), execution_time_ms: z.number() },
    },
    ({ code, timeout }) => guarded(async () => answer(await ports.runPython(code, timeout))),
  );
}
