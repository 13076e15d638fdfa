import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { articlePage, type LocalServer, listen } from '../web/pages.js';

/**
 * /z1/mcp as an operation like the others: a tool call is paid (1 credit, refunded when the tool fails, 402 when the
 * balance is out), every POST is admitted by the rate limit (429 with its headers), a bound key acts for its end
 * user only; and the tools that reach beyond the documents: web_search (a SearXNG and a page served here) and
 * search_documents over vector stores.
 */
const FACT = 'The lighthouse of Ushant flashes twice every ten seconds.';

interface RpcReply {
  jsonrpc: '2.0';
  id: number;
  result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: Array<{ text: string }> };
  error?: { code: number; message: string };
}

describe('MCP tool calls: credits, rate limits, bound keys, web search and vector stores (sqlite)', () => {
  let server: TestServer;
  let pages: LocalServer;
  let searx: LocalServer;

  before(async () => {
    pages = await listen((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(articlePage('Ushant lighthouse', FACT, 40));
    });
    searx = await listen((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ results: [{ url: `${pages.url}/ushant`, title: 'Ushant', content: 'Lighthouse facts.' }] }),
      );
    });
    server = await startTestServer('sqlite', {
      config: {
        tiers: { free: { rpm: 4 }, business: { rpm: 10_000 } },
        web: { searchProvider: 'searxng', searchUrl: searx.url, fetchAllow: [pages.url], totalMs: 3000 },
      },
    });
  });
  after(async () => {
    await server?.close();
    await pages?.close();
    await searx?.close();
  });

  const rpc = (apiKey: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/z1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    });
  const callTool = (
    apiKey: string,
    name: string,
    args: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) =>
    rpc(apiKey, { id: 1, method: 'tools/call', params: { name, arguments: args } }, { 'x-pv-user': 'ann', ...headers });
  const balance = async (accountId: string) =>
    Number((await server.request('GET', `/admin/accounts/${accountId}`, { admin: true })).body.credits);

  it('a tool call costs 1 credit, a failed one nothing, a listing nothing; out of credits it is 402', async () => {
    const { apiKey, accountId } = await server.createAccount('business', 2);
    const listed = await rpc(apiKey, { id: 1, method: 'tools/list', params: {} });
    assert.equal(listed.headers.get('x-credits-charged'), '0');
    const ok = await callTool(apiKey, 'remember', { content: 'Ann likes tea.' });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-credits-charged'), '1');
    const failed = await callTool(apiKey, 'forget', { memory_id: 'mem_none' });
    assert.equal(((await failed.json()) as RpcReply).result?.isError, true);
    assert.equal(failed.headers.get('x-credits-charged'), '0');
    assert.equal(await balance(accountId), 1);
    assert.equal((await callTool(apiKey, 'recall', { query: 'tea' })).status, 200);
    const out = await callTool(apiKey, 'recall', { query: 'tea' });
    assert.equal(out.status, 402);
    assert.equal(((await out.json()) as { code: string }).code, 'INSUFFICIENT_CREDITS');
    assert.equal(await balance(accountId), 0);
  });

  it('every POST is admitted by the rate limit: the fifth in a minute on rpm 4 is 429 with its headers', async () => {
    const { apiKey } = await server.createAccount('free', 100);
    for (let i = 0; i < 4; i++) {
      const res = await rpc(apiKey, { id: i, method: 'tools/list', params: {} });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ratelimit-limit'), '4');
    }
    const refused = await rpc(apiKey, { id: 9, method: 'tools/list', params: {} });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(refused.headers.get('retry-after'));
  });

  it('a key bound to an end user acts for them: another X-PV-User is 403; an unknown protocol version is 400', async () => {
    const { apiKey, accountId } = await server.createAccount('business', 100);
    const bound = await server.request<{ api_key: string }>('POST', `/admin/accounts/${accountId}/keys`, {
      admin: true,
      body: { user_id: 'ann' },
    });
    assert.equal(bound.status, 201, bound.text);
    const other = await callTool(bound.body.api_key, 'recall', { query: 'tea' }, { 'x-pv-user': 'bob' });
    assert.equal(other.status, 403);
    assert.equal(((await other.json()) as { code: string }).code, 'END_USER_NOT_ALLOWED');
    const own = await callTool(bound.body.api_key, 'recall', { query: 'tea' }, { 'x-pv-user': 'ann' });
    assert.equal(own.status, 200);
    const version = await rpc(
      apiKey,
      { id: 1, method: 'tools/list', params: {} },
      { 'mcp-protocol-version': '1999-01-01' },
    );
    assert.equal(version.status, 400);
  });

  it('web_search reads the page behind the guard; search_documents searches named vector stores', async () => {
    const { apiKey } = await server.createAccount('business', 100);
    const client = new Client({ name: 'pvai-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/z1/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${apiKey}`, 'X-PV-User': 'ann' } },
      }),
    );
    const web = await client.callTool({ name: 'web_search', arguments: { query: 'Ushant lighthouse flashes' } });
    const results = (web.structuredContent as { results: Array<{ url: string; text: string }> }).results;
    assert.ok(
      results.some((r) => r.text.includes('flashes twice')),
      JSON.stringify(web),
    );

    const form = new FormData();
    form.append('file', new Blob(['The ferry to Ushant leaves Brest at 7:30.']), 'ferry.txt');
    form.append('purpose', 'assistants');
    const file = (await (
      await fetch(`${server.url}/z1/files`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${apiKey}` },
      })
    ).json()) as { id: string };
    const store = await server.request<{ id: string }>('POST', '/z1/vector_stores', {
      apiKey,
      body: { name: 'ferries', file_ids: [file.id] },
    });
    const found = await client.callTool({
      name: 'search_documents',
      arguments: { query: 'ferry Brest', vector_store_ids: [store.body.id] },
    });
    const hits = (found.structuredContent as { results: Array<{ document_id: string; title: string }> }).results;
    assert.equal(hits[0]?.document_id, file.id);
    assert.equal(hits[0]?.title, 'ferry.txt');
    const foreign = await client.callTool({
      name: 'search_documents',
      arguments: { query: 'ferry', vector_store_ids: ['vs_not_yours'] },
    });
    assert.equal(foreign.isError, true);
    await client.close();
  });
});
