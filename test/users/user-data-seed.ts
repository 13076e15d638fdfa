import assert from 'node:assert/strict';
import { type DocumentBody, filler } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import type { TestServer } from '../support/server.js';

export const DOC_FACT = 'The harbour gate code of the Zephyr workshop is 7431-walrus.';
export const MEMORY = 'The user plays the cello every Sunday.';

export interface ExportBody {
  object: string;
  user_id: string;
  memories: Array<{
    memory_id: string;
    memory?: { id: string; content: string; user_id: string };
    history: Array<{ event: string; content: string; previous_content: string | null }>;
  }>;
  documents: Array<DocumentBody & { text: string; user_id: string }>;
  usage: Array<{ request_id: string; endpoint: string; credits: number; prompt_tokens: number }>;
  request_logs: Array<{ request_id: string; user_id: string | null; content: unknown }>;
  idempotent_requests: Array<{ key: string; endpoint: string; status: number | null }>;
  responses: Array<{ response: { id: string; user_id: string }; input_items: Array<{ id: string }> }>;
}
export interface ErasureBody {
  object: string;
  user_id: string;
  erased: { memories: number; documents: number; responses: number; conversations: number; usage: number };
}
export interface ChatBody {
  memory_context: { items_retrieved: number };
  citations?: Array<{ document_id?: string }>;
}

/** How many points of (account, user) the Qdrant holds: by both, as another account's user of the same id has its own. */
export async function qdrantCount(url: string, accountId: string, userId: string): Promise<number> {
  const must = [
    { key: 'account_id', match: { value: accountId } },
    { key: 'user_id', match: { value: userId } },
  ];
  const res = await fetch(`${url}/collections/pvai_chunks/points/count`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ exact: true, filter: { must } }),
  });
  assert.ok(res.ok, await res.clone().text());
  return ((await res.json()) as { result: { count: number } }).result.count;
}

/** What `seedUsers` made: the two accounts, and the ids of what ada's data holds. */
export interface SeededUsers {
  accountId: string;
  apiKey: string;
  otherAccountId: string;
  otherKey: string;
  doc: DocumentBody;
  deletedMemoryId: string;
  responseId: string;
}

/**
 * Two accounts, each with a user called ada, and the data the export and the erase are about: ada of the first
 * account has memories (one corrected, one deleted), a ready document, a chat, embeddings and a stored response
 * naming her; bob of the same account and the other account's ada have a memory and a document each.
 */
export async function seedUsers(server: TestServer): Promise<SeededUsers> {
  const { accountId, apiKey } = await server.createAccount('free', 10_000);
  const { accountId: otherAccountId, apiKey: otherKey } = await server.createAccount('free', 10_000);

  // ada, of the first account: memories (one corrected, one deleted), a document, and requests naming her.
  const remember = async (key: string, userId: string, content: string) => {
    const res = await server.request<{ id: string }>('POST', '/z1/memory', {
      apiKey: key,
      body: { user_id: userId, content },
    });
    assert.equal(res.status, 201, res.text);
    return res.body.id;
  };
  const corrected = await remember(apiKey, 'ada', 'The user lives in Lyon.');
  const patched = await server.request('PATCH', `/z1/memory/${corrected}?user_id=ada`, {
    apiKey,
    body: { content: 'The user lives in Paris.' },
  });
  assert.equal(patched.status, 200);
  await remember(apiKey, 'ada', MEMORY);
  const deletedMemoryId = await remember(apiKey, 'ada', 'The user collects stamps.');
  assert.equal((await server.request('DELETE', `/z1/memory/${deletedMemoryId}?user_id=ada`, { apiKey })).status, 200);
  const created = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
    apiKey,
    body: { user_id: 'ada', title: 'Workshop notes', content: `${filler(6)}\n\n${DOC_FACT}\n\n${filler(6, 40)}` },
  });
  assert.equal(created.status, 201, created.text);
  const doc = created.body;
  const ready = await eventually(
    () => server.request<DocumentBody>('GET', `/z1/rag/documents/${doc.id}?user_id=ada`, { apiKey }),
    (r) => r.body.status === 'ready',
    20_000,
  );
  assert.equal(ready.body.status, 'ready');
  // OpenAI's `user` names her as well as `user_id` does; embeddings name her by `user`.
  // Under an Idempotency-Key: its record names her too.
  const chat = await server.request('POST', '/z1/chat/completions', {
    apiKey,
    headers: { 'Idempotency-Key': 'ada-hello' },
    body: { model: 'PV-TURBO', user: 'ada', messages: [{ role: 'user', content: 'Hello there.' }] },
  });
  assert.equal(chat.status, 200, chat.text);
  const embedded = await server.request('POST', '/z1/embeddings', {
    apiKey,
    body: { model: 'PV-EMBED', input: 'a cello', user: 'ada' },
  });
  assert.equal(embedded.status, 200, embedded.text);
  // A stored response of hers (the Responses API stores by default).
  const response = await server.request<{ id: string }>('POST', '/z1/responses', {
    apiKey,
    body: { model: 'PV-TURBO', user_id: 'ada', input: 'Remember this for later.' },
  });
  assert.equal(response.status, 200, response.text);
  const responseId = response.body.id;

  // Everyone else: bob of the same account, and an ada of another account.
  await remember(apiKey, 'bob', 'The user keeps bees.');
  await remember(otherKey, 'ada', 'The user sails on weekends.');
  for (const [key, userId] of [
    [apiKey, 'bob'],
    [otherKey, 'ada'],
  ] as const) {
    const res = await server.request('POST', '/z1/rag/documents', {
      apiKey: key,
      body: { user_id: userId, title: 'Other notes', content: `${DOC_FACT} Also the bees of ${userId}.` },
    });
    assert.equal(res.status, 201);
  }
  await server.running.runtime.memory.settled();
  return { accountId, apiKey, otherAccountId, otherKey, doc, deletedMemoryId, responseId };
}
