import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors/index.js';
import type { ToolCaller, ToolPorts } from './tools.js';

/** MCP's code for a resource that is not there (the specification's, the SDK names none). */
const RESOURCE_NOT_FOUND = -32002;
/** Documents listed at most: the newest first. */
const MAX_LISTED = 200;

const uriOf = (id: string) => `pvai://documents/${encodeURIComponent(id)}`;

/**
 * The end user's documents as MCP resources, `pvai://documents/{document_id}`: listed newest first (without an end
 * user, none), read as their extracted text, the text a search result's span points into. Another end user's
 * document, or one that is gone, is MCP's resource-not-found error.
 */
export function registerDocumentResources(server: McpServer, ports: ToolPorts, caller: ToolCaller): void {
  server.registerResource(
    'document',
    new ResourceTemplate('pvai://documents/{document_id}', {
      list: async () => {
        if (caller.userId === undefined) return { resources: [] };
        const documents = await ports.listDocuments(caller.userId);
        return {
          resources: documents.slice(0, MAX_LISTED).map((d) => ({
            uri: uriOf(d.document_id),
            name: d.title,
            mimeType: 'text/plain',
            description: `${d.content_type}, ${d.status}`,
            size: d.size_bytes,
          })),
        };
      },
    }),
    { title: 'Documents', description: "The end user's documents, as their extracted text", mimeType: 'text/plain' },
    async (uri, { document_id }) => {
      const id = decodeURIComponent(String(document_id));
      if (caller.userId === undefined) {
        throw new McpError(RESOURCE_NOT_FOUND, 'Name the end user with the X-PV-User header to read documents');
      }
      try {
        return {
          contents: [{ uri: uri.href, mimeType: 'text/plain', text: await ports.readDocument(caller.userId, id) }],
        };
      } catch (err) {
        if (err instanceof AppError && err.code === 'NOT_FOUND')
          throw new McpError(RESOURCE_NOT_FOUND, `No document ${id}`);
        throw err;
      }
    },
  );
}
