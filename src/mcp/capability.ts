import { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/index.js';
import { fusedRelevance } from '../retrieval/index.js';
import type { CodeRunner } from '../sandbox/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { FetchGuard } from '../web/index.js';
import { mcpConnector, type RemoteMcpLimits } from './connector.js';
import { type McpOperationDeps, mcpOperations, ownServer } from './operations.js';
import type { ToolPorts } from './tools.js';

type Tenant = { accountId: string; userId: string };

/** How long a web_search tool call may take, search and pages (the grounding's own budget is within it). */
const WEB_SEARCH_MS = 30_000;

/** What the MCP tools need of the documents and memory (their services, given by the composition root). */
export interface McpDeps {
  documents: {
    list(
      tenant: Tenant,
    ): Promise<
      Array<{ id: string; title: string; contentType: string; status: string; sizeBytes: number; createdAt: number }>
    >;
    text(tenant: Tenant, id: string): Promise<string>;
    search(
      tenant: Tenant,
      query: string,
      k: number,
    ): Promise<
      Array<{
        documentId: string;
        title: string;
        text: string;
        score: number;
        page: number | null;
        charStart: number;
        charEnd: number;
      }>
    >;
  };
  memory: {
    create(tenant: Tenant, input: { content: string }): Promise<{ id: string; content: string }>;
    search(tenant: Tenant, query: string, k: number): Promise<Array<{ id: string; content: string; score: number }>>;
    delete(tenant: Tenant, id: string): Promise<void>;
  };
  /** The caller's vector stores, searched as chat's `vector_store_ids` searches them. */
  vectorStores: {
    searchNamed(
      viewer: { accountId: string; userId: string | null },
      ids: readonly string[],
      query: string,
      k: number,
    ): Promise<
      Array<{
        fileId: string;
        filename: string;
        chunkId: string;
        text: string;
        score: number;
        page: number | null;
        charStart: number;
        charEnd: number;
      }>
    >;
  };
  web: {
    ground(
      query: string,
      signal: AbortSignal,
    ): Promise<{ passages: Array<{ text: string; citation: { url?: string; title?: string; score?: number } }> }>;
  };
  sandbox: CodeRunner;
  tiers: TierPolicy;
  credits: McpOperationDeps['credits'];
  /** Remote MCP servers (Responses' `mcp` tools): private hosts allowed, time and size limits. */
  remote: RemoteMcpLimits & { allow: readonly string[] };
}

/**
 * pvai as an MCP server at /z1/mcp (documents, memory, the sandbox and web search as tools, behind the same keys),
 * and the client the Responses API's `mcp` tools connect with (`connector`).
 */
export function mcpCapability(deps: McpDeps) {
  const portsFor = (principal: Principal): ToolPorts => {
    const { account } = principal;
    const tenant = (userId: string) => ({ accountId: account.id, userId });
    return {
      async searchDocuments(userId, query, k, vectorStoreIds) {
        deps.tiers.checkRagK(account, k, 'k');
        if (vectorStoreIds) {
          const viewer = { accountId: account.id, userId: principal.key.userId };
          return (await deps.vectorStores.searchNamed(viewer, vectorStoreIds, query, k)).map((m) => ({
            document_id: m.fileId,
            title: m.filename,
            text: m.text,
            score: fusedRelevance(m.score),
            page: m.page,
            char_start: m.charStart,
            char_end: m.charEnd,
          }));
        }
        return (await deps.documents.search(tenant(userId), query, k)).map((m) => ({
          document_id: m.documentId,
          title: m.title,
          text: m.text,
          score: fusedRelevance(m.score),
          page: m.page,
          char_start: m.charStart,
          char_end: m.charEnd,
        }));
      },
      async listDocuments(userId) {
        const documents = await deps.documents.list(tenant(userId));
        return documents
          .sort((a, b) => b.createdAt - a.createdAt)
          .map((d) => ({
            document_id: d.id,
            title: d.title,
            content_type: d.contentType,
            status: d.status,
            size_bytes: d.sizeBytes,
          }));
      },
      readDocument: (userId, documentId) => deps.documents.text(tenant(userId), documentId),
      async webSearch(query) {
        const { passages } = await deps.web.ground(query, AbortSignal.timeout(WEB_SEARCH_MS));
        return passages.map((p) => ({
          url: p.citation.url ?? '',
          title: p.citation.title ?? '',
          text: p.text,
          score: p.citation.score ?? 0,
        }));
      },
      async remember(userId, content) {
        const memory = await deps.memory.create(tenant(userId), { content });
        return { memory_id: memory.id, content: memory.content };
      },
      async recall(userId, query, k) {
        deps.tiers.checkRagK(account, k, 'k');
        return (await deps.memory.search(tenant(userId), query, k)).map((m) => ({
          memory_id: m.id,
          content: m.content,
          score: m.score,
        }));
      },
      forget: (userId, memoryId) => deps.memory.delete(tenant(userId), memoryId),
      async runPython(code, timeout) {
        const seconds = deps.tiers.codeTimeout(account, timeout);
        const outcome = await deps.sandbox.execute({ code, timeoutSeconds: seconds, accountId: account.id });
        if (outcome.kind === 'timeout') {
          throw new AppError('EXECUTION_TIMEOUT', `Execution timed out after ${seconds} s`, { timeout: seconds });
        }
        return {
          output: outcome.output,
          error: outcome.error,
          execution_time_ms: Math.round(outcome.executionTimeMs),
        };
      },
    };
  };
  const connector = mcpConnector({
    guard: new FetchGuard({ allow: deps.remote.allow, anyPort: true }),
    limits: deps.remote,
    ownServer(caller) {
      return ownServer(portsFor(caller.principal), caller);
    },
  });
  return { name: 'mcp', operations: mcpOperations({ portsFor, credits: deps.credits }), connector };
}
