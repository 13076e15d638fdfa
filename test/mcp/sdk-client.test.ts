import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { qdrantPoints, type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The official MCP TypeScript SDK's client, unmodified, against /z1/mcp over real HTTP: it connects (its own
 * initialize and protocol version), lists pvai's tools and calls them, one end user's data never another's.
 */
async function connect(server: TestServer, apiKey: string, userId?: string): Promise<Client> {
  const client = new Client({ name: 'pvai-test', version: '1.0.0' });
  const headers: Record<string, string> = { Authorization: `Bearer ${apiKey}` };
  if (userId) headers['X-PV-User'] = userId;
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/z1/mcp`), { requestInit: { headers } }),
  );
  return client;
}

type Structured = Record<string, unknown>;

for (const rag of ragBackends()) {
  describe(`the MCP TypeScript SDK against /z1/mcp (${rag.label})`, () => {
    let server: TestServer;
    let retrieval: Retrieval;
    let apiKey: string;

    before(async () => {
      retrieval = await startRetrieval(rag);
      server = await startTestServer(rag.backend, {
        config: { ...retrieval.config, tiers: { business: { rpm: 10_000 } } },
      });
      ({ apiKey } = await server.createAccount('business', 10_000));
    });
    after(async () => {
      await server?.close();
      await retrieval?.stop();
    });

    it('lists the tools with their schemas', async () => {
      const client = await connect(server, apiKey, 'alice');
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'forget',
        'recall',
        'remember',
        'run_python',
        'search_documents',
        'web_search',
      ]);
      for (const tool of tools) {
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        assert.equal(tool.outputSchema?.type, 'object', tool.name);
      }
      await client.close();
    });

    it('remembers, recalls and forgets for one end user; another end user recalls nothing of theirs', async () => {
      const alice = await connect(server, apiKey, 'alice');
      const stored = await alice.callTool({ name: 'remember', arguments: { content: 'Alice keeps bees in Lyon.' } });
      const memoryId = (stored.structuredContent as Structured).memory_id as string;
      assert.match(memoryId, /^mem_/);
      const recalled = await alice.callTool({ name: 'recall', arguments: { query: 'bees' } });
      const memories = (recalled.structuredContent as { memories: Array<{ memory_id: string }> }).memories;
      assert.deepEqual(
        memories.map((m) => m.memory_id),
        [memoryId],
      );

      const bob = await connect(server, apiKey, 'bob');
      const theirs = await bob.callTool({ name: 'recall', arguments: { query: 'bees' } });
      assert.deepEqual((theirs.structuredContent as { memories: unknown[] }).memories, []);
      const refused = await bob.callTool({ name: 'forget', arguments: { memory_id: memoryId } });
      assert.equal(refused.isError, true, JSON.stringify(refused));

      const forgotten = await alice.callTool({ name: 'forget', arguments: { memory_id: memoryId } });
      assert.deepEqual(forgotten.structuredContent, { memory_id: memoryId, deleted: true });
      await Promise.all([alice.close(), bob.close()]);
    });

    it('searches the end user’s documents and runs Python in the sandbox', async () => {
      const put = await server.request('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'carol', title: 'Handbook', content: 'The cafeteria closes at 15:30 on Fridays.' },
      });
      assert.equal(put.status, 201, put.text);
      const carol = await connect(server, apiKey, 'carol');
      const found = await carol.callTool({ name: 'search_documents', arguments: { query: 'cafeteria Fridays' } });
      const results = (found.structuredContent as { results: Array<{ text: string; title: string }> }).results;
      assert.equal(results[0]?.title, 'Handbook');
      assert.match(results[0]?.text ?? '', /15:30/);
      // On Qdrant the search went there: the document's chunk is a point of carol's.
      if (retrieval.url) assert.ok((await qdrantPoints(retrieval.url, 'carol')) > 0);
      const ran = await carol.callTool({ name: 'run_python', arguments: { code: 'print(6 * 7)' } });
      assert.equal((ran.structuredContent as Structured).output, '42\n');
      await carol.close();
    });

    it('lists the end user’s documents as resources and reads their text; another end user’s are not there', async () => {
      const put = await server.request<{ id: string }>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'dora', title: 'Garden notes', content: 'The quince tree flowers in April.' },
      });
      assert.equal(put.status, 201, put.text);
      const dora = await connect(server, apiKey, 'dora');
      const { resources } = await dora.listResources();
      const uri = `pvai://documents/${put.body.id}`;
      assert.deepEqual(
        resources.map((r) => [r.uri, r.name, r.mimeType]),
        [[uri, 'Garden notes', 'text/plain']],
      );
      const read = await dora.readResource({ uri });
      assert.deepEqual(read.contents, [{ uri, mimeType: 'text/plain', text: 'The quince tree flowers in April.' }]);

      const erin = await connect(server, apiKey, 'erin');
      assert.deepEqual((await erin.listResources()).resources, []);
      await assert.rejects(erin.readResource({ uri }), (err: Error & { code?: number }) => err.code === -32002);
      const nobody = await connect(server, apiKey);
      assert.deepEqual((await nobody.listResources()).resources, []);
      await Promise.all([dora.close(), erin.close(), nobody.close()]);
    });

    it('without an end user a tool call is an error result; another account’s key is refused', async () => {
      const nobody = await connect(server, apiKey);
      const result = await nobody.callTool({ name: 'recall', arguments: { query: 'bees' } });
      assert.equal(result.isError, true);
      await nobody.close();
      await assert.rejects(connect(server, 'pv_not_a_key'), /401|Unauthorized|UNAUTHORIZED/);
    });
  });
}
