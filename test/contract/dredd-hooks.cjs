// Dredd hooks for the pvai contract run (see docs/contract-testing.md).
//
// Dredd turns every documented response of openapi/openapi.yaml into one transaction that sends the operation's
// request example and expects that status code, the documented headers and a body matching the schema. Dredd 14
// ignores OpenAPI security schemes and knows nothing about this API's state, so these hooks:
//   - authenticate: `Authorization: Bearer <key>` on /z1 (but /z1/health*), the admin token on /admin;
//   - replace the example ids in paths by real ones created in beforeAll (memory, document, account, keys, stored
//     and background responses, conversations and their items);
//   - turn the request of each non-2xx transaction into one that really provokes that status, where the status
//     can be provoked from outside on a healthy server (400, 401, 402, 403, 404, 408, 409, 413, 415) by a whole
//     request (a body that stops arriving, the other 408, is the slow-client tests' and the fuzz stage's);
//   - skip, with the reason printed, what cannot be meaningful (see SKIP_STATUS and the capability probe);
//   - check the text/event-stream answers of chat completions and responses themselves (Dredd cannot).
// Beside: the hooks' requests and beforeAll's findings (dredd-server.cjs), stored responses (dredd-responses.cjs),
// conversations, files and vector stores (with createFile's form), the erased end user, the usage CSV and end
// users (dredd-conversations, -vector-stores, -erased-user, -usage.cjs), the contract's tables (dredd-facts.cjs).
// The server comes from test/contract/serve-for-contract.mjs: PVAI_URL, PVAI_API_KEY, PVAI_ADMIN_TOKEN.
const hooks = require('hooks');
const { checkChatStream } = require('./chat-stream-check.cjs');
const { checkResponseStream } = require('./response-stream-check.cjs');
const { conversationIdOf, createFixtureConversations, placeItemConversation } = require('./dredd-conversations.cjs');
const { checkSeededUser, seedErasedUser } = require('./dredd-erased-user.cjs');
const {
  checkCancelled,
  createFixtureResponses,
  expectStoredResponse,
  rememberCreatedExample,
  responseIdOf,
} = require('./dredd-responses.cjs');
const { PVAI_API_KEY, PVAI_ADMIN_TOKEN, available, ids, must, probe } = require('./dredd-server.cjs');
const { mcpTransaction } = require('./dredd-mcp.cjs');
const { TEXTUAL, seedRequestLog, usageTransaction, withoutExampleAliases } = require('./dredd-usage.cjs');
const vs = require('./dredd-vector-stores.cjs');

const {
  EXAMPLE_IDS,
  MISSING_IDS,
  TOO_LONG_ID,
  EXAMPLE_USER,
  ERASED_USER,
  TOO_LONG_USER,
  BOUND_USER,
  TIER_FORBIDDEN,
  END_USER_FIELD,
  EXPECTED_CODE,
  SKIP_STATUS,
  capabilityOf,
  bodyLimitOf,
  idempotencySkip,
} = require('./dredd-facts.cjs');

const skipped = []; // [transaction name, reason]

hooks.beforeAll((transactions, done) => {
  (async () => {
    const tag = Math.random().toString(36).slice(2, 10);
    rememberCreatedExample(transactions);
    await probe('memory', 'GET', '/z1/memory?user_id=dredd-probe');
    await probe('rag', 'GET', '/z1/rag/documents?user_id=dredd-probe');
    await probe('sla', 'GET', '/z1/sla');
    await probe('metrics', 'GET', '/metrics');
    await probe('code', 'POST', '/z1/code/execute', { code: 'print(1)', user_id: 'dredd-probe' });
    await probe('chat', 'POST', '/z1/chat/completions', {
      model: 'PV-TURBO',
      user_id: 'dredd-probe',
      messages: [{ role: 'user', content: 'probe' }],
      max_tokens: 8,
    });
    // No embedding model on the server (the contract server's default data dir has none): 503, documented.
    await probe('embeddings', 'POST', '/z1/embeddings', { model: 'PV-EMBED', input: 'probe' });
    await createFixtureResponses();
    await createFixtureConversations();
    await vs.createFixtureVectorStores();

    // The account the admin transactions work on (a fresh one, so changing its tier harms nothing).
    const fixture = await must(201, 'POST', '/admin/accounts', {
      auth: 'admin',
      body: { email: `dredd-fixture-${tag}@example.com`, tier: 'startup', credits: 100 },
    });
    ids.account = fixture.account.id;
    ids.accountEmail = fixture.account.email;
    ids.revokeKey = (
      await must(201, 'POST', `/admin/accounts/${ids.account}/keys`, { auth: 'admin', body: {} })
    ).key.id;
    ids.rotateKey = (
      await must(201, 'POST', `/admin/accounts/${ids.account}/keys`, { auth: 'admin', body: {} })
    ).key.id;
    // A free account with no credits: 402 (credits) and 403 (model and feature not in the tier).
    const free = await must(201, 'POST', '/admin/accounts', {
      auth: 'admin',
      body: { email: `dredd-free-${tag}@example.com`, tier: 'free', credits: 0 },
    });
    ids.freeKey = free.api_key;
    // A key of the contract account bound to one end user: naming another through it is 403 END_USER_NOT_ALLOWED.
    ids.boundKey = (
      await must(201, 'POST', `/admin/accounts/${process.env.PVAI_ACCOUNT_ID}/keys`, {
        auth: 'admin',
        body: { user_id: BOUND_USER },
      })
    ).api_key;

    // Under a user of its own, so that the example's "forget user-123" does not delete it first.
    if (available.memory === true) {
      ids.memory = (
        await must(201, 'POST', '/z1/memory', {
          body: { user_id: 'dredd-fixture', content: 'Likes tea.', metadata: { origin: 'settings' } },
        })
      ).id;
    }
    // The end user the export and erase transactions work on (2xx), with data of their own to export and erase.
    await seedErasedUser();
    await seedRequestLog(must);
    if (available.rag === true) {
      ids.document = (
        await must(201, 'POST', '/z1/rag/documents', {
          // The example's user: GET and DELETE /z1/rag/documents/{id} name it in their user_id query.
          body: { user_id: 'user-123', title: 'Fixture', content: 'The fixture document.' },
        })
      ).id;
    }
  })().then(
    () => done(),
    (err) => {
      console.error(err);
      process.exitCode = 1;
      // Fail every transaction rather than run them against a half-prepared server.
      for (const t of transactions) t.fail = `beforeAll failed: ${err.message}`;
      done();
    },
  );
});

function skip(t, reason) {
  t.skip = true;
  skipped.push([t.name, reason]);
}

function setPath(t, path) {
  t.fullPath = path;
  t.request.uri = path;
}

function replaceId(t, kind, id) {
  setPath(t, t.fullPath.replace(EXAMPLE_IDS[kind], id));
}

function jsonBody(t) {
  return t.request.body ? JSON.parse(t.request.body) : {};
}

function setBody(t, value) {
  t.request.body = typeof value === 'string' ? value : JSON.stringify(value);
  t.request.headers['Content-Type'] ??= 'application/json';
}

function setQuery(t, mutate) {
  const url = new URL(t.fullPath, 'http://x');
  mutate(url.searchParams);
  setPath(t, url.pathname + (url.search || ''));
}

/** Which example id a path carries, and the real id that should replace it for a 2xx transaction. */
function idKind(resource) {
  if (resource.includes('{memory_id}')) return 'memory';
  if (resource.includes('{document_id}')) return 'document';
  if (resource.includes('{account_id}')) return 'account';
  if (resource.includes('{key_id}')) return 'key';
  if (resource.includes('{model_id}')) return 'model';
  if (resource.includes('{response_id}')) return 'response';
  if (resource.includes('{item_id}')) return 'item'; // of the fixture conversation
  if (resource.includes('{conversation_id}')) return 'conversation';
  return vs.vectorStoreKind(resource); // file, vectorStore, batch
}

function realId(kind, resource, method) {
  if (kind === 'key') return resource.endsWith('/rotate') ? ids.rotateKey : ids.revokeKey;
  if (kind === 'response') return responseIdOf(resource, method);
  if (kind === 'conversation' || kind === 'item') return conversationIdOf(kind, resource, method);
  return vs.vectorStoreIdOf(kind, resource, method) ?? ids[kind];
}

hooks.beforeEach((t) => {
  if (t.fail) return; // beforeAll failed
  const resource = t.origin.resourceName; // the path template, e.g. /z1/memory/{memory_id}
  const method = t.request.method;
  const status = Number(t.expected.statusCode);
  const headers = t.request.headers;
  const isAdmin = resource.startsWith('/admin/');
  const needsKey = resource.startsWith('/z1/') && !resource.startsWith('/z1/health');
  const hasBody = Boolean(t.request.body);

  const contentType = Object.entries(headers).find(([h]) => h.toLowerCase() === 'content-type')?.[1] ?? '';
  if (String(contentType).startsWith('multipart/form-data') && resource !== '/z1/files') {
    // Dredd has no file to send (createFile's form is built by dredd-vector-stores.cjs); document uploads are
    // covered by test/documents/formats.test.ts and by schemathesis.
    return skip(t, 'multipart/form-data: dredd cannot build a file upload');
  }
  if (isAdmin) headers.Authorization = `Bearer ${PVAI_ADMIN_TOKEN}`;
  else if (needsKey) headers.Authorization = `Bearer ${PVAI_API_KEY}`;

  const kind = idKind(resource);
  // The id now in the path (the model example PV-STANDARD exists as it is).
  const currentId =
    kind === 'model' ? 'PV-STANDARD' : kind ? (realId(kind, resource, method) ?? EXAMPLE_IDS[kind]) : null;
  if (kind && kind !== 'model') replaceId(t, kind, currentId);
  placeItemConversation(t, kind);
  vs.placeVectorStore(t, kind);

  const capability = capabilityOf(resource);
  const unavailable = capability && available[capability] !== true;

  if (SKIP_STATUS[status]) return skip(t, `${status}: ${SKIP_STATUS[status]}`);
  if (idempotencySkip(headers, status, resource)) return skip(t, idempotencySkip(headers, status, resource));

  if (isAdmin) {
    // The admin API has no account and so no rate-limit window: it sends no X-RateLimit-* headers. The shared
    // BadRequest response documents them (optional, as every OpenAPI header without `required: true`), but
    // Dredd expects every documented header to be present.
    for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) delete t.expected.headers[h];
  }
  if (status >= 400) {
    // The shared error responses carry one example each (e.g. 403's is MODEL_NOT_ALLOWED with details
    // {model, tier}) and Dredd requires the example's keys, so /z1/sla's FEATURE_NOT_ALLOWED ({feature, tier})
    // would fail on the example's details alone. Require the Error schema's keys; the `code` is checked in
    // beforeEachValidation against what this transaction provokes.
    t.expected.body = JSON.stringify({
      status: 'error',
      message: '',
      code: '',
      details: null,
      error: { message: '', type: '', code: '', param: null },
    });
  }
  if (vs.vectorStoreTransaction(t, status)) return; // createFile's form; what the Files and Vector Stores provoke
  if (mcpTransaction(t, status) || usageTransaction(t, status)) return; // /z1/mcp's; the usage CSV; /z1/users' 404; /z1/logs' 403

  if (status >= 200 && status < 300) {
    if (unavailable) return skip(t, `${capability} is not available on this server yet (it answers 503)`);
    const noStoredResponse = expectStoredResponse(t, kind, resource, method);
    if (noStoredResponse) return skip(t, noStoredResponse);
    if (t.origin.exampleName.endsWith('text/event-stream')) {
      // Streaming is chosen by `stream: true` in the body (GET: in the query, dredd-responses.cjs), not by Accept.
      if (method !== 'GET') setBody(t, { ...jsonBody(t), stream: true });
      t.expected.headers['Content-Type'] = 'text/event-stream';
    }
    // The fixture memory's user (the example's user-123 is forgotten by DELETE /z1/memory first).
    if (kind === 'memory') setQuery(t, (q) => q.set('user_id', 'dredd-fixture'));
    // An end user of their own: exported, then erased (the export's path comes first in the document).
    if (resource.includes('{user_id}')) setPath(t, t.fullPath.replace(EXAMPLE_USER, ERASED_USER));
    if (resource === '/admin/accounts' && method === 'POST') {
      setBody(t, { ...jsonBody(t), email: `dredd-created-${Date.now()}@example.com` });
    }
    return;
  }

  t.expectedCode = EXPECTED_CODE[status];
  switch (status) {
    case 400:
      if (resource === '/z1/chat/completions' || resource === '/z1/responses' || resource === '/z1/embeddings') {
        setBody(t, { ...jsonBody(t), model: 'PV-NONEXISTENT' });
        t.expectedCode = 'INVALID_MODEL';
      } else if (hasBody)
        setBody(t, { ...jsonBody(t), unexpected_field: true }); // additionalProperties: false
      else if (resource.includes('{user_id}')) setPath(t, t.fullPath.replace(EXAMPLE_USER, TOO_LONG_USER));
      else if (kind) setPath(t, t.fullPath.replace(currentId, TOO_LONG_ID));
      else if (resource === '/z1/usage') setQuery(t, (q) => q.set('group_by', 'week'));
      else if (resource === '/z1/sla') setQuery(t, (q) => q.set('window', '2h'));
      else if (t.fullPath.includes('user_id=')) setQuery(t, (q) => q.delete('user_id'));
      else if (isAdmin || needsKey) {
        // Nothing of this request can be invalid but its credentials: a second, different key is ambiguous.
        // Refused before authentication, so without the (optional) rate-limit headers of authenticated answers.
        headers['X-API-Key'] = `pv_sk_${'0'.repeat(40)}`;
        t.expectedCode = 'AMBIGUOUS_CREDENTIALS';
        for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
          delete t.expected.headers[h];
      } else return skip(t, '400: no invalid variant of this request is defined');
      return;
    case 401:
      if (isAdmin) headers.Authorization = 'Bearer not-the-admin-token-0000';
      else delete headers.Authorization;
      return;
    case 402:
      // A free account with a balance of 0 asks for a model its tier includes (embeddings: every tier).
      if (unavailable) return skip(t, `402: ${capability} is not available on this server (it answers 503 first)`);
      headers.Authorization = `Bearer ${ids.freeKey}`;
      if (resource !== '/z1/embeddings') setBody(t, { ...jsonBody(t), model: 'PV-TURBO' });
      return;
    case 403:
      if (TIER_FORBIDDEN[resource]) {
        // The free tier: a model it does not include, or a feature it does not have (/z1/sla).
        headers.Authorization = `Bearer ${ids.freeKey}`;
        t.expectedCode = TIER_FORBIDDEN[resource];
        if (t.expectedCode === 'MODEL_NOT_ALLOWED') setBody(t, { ...jsonBody(t), model: 'PV-ADVANCED' });
        return;
      }
      // A key bound to BOUND_USER naming another: the example's user-123 in the path or the query, else in the body.
      headers.Authorization = `Bearer ${ids.boundKey}`;
      if (!resource.includes('{user_id}') && !t.fullPath.includes('user_id=')) {
        setBody(t, { ...jsonBody(t), [END_USER_FIELD[resource] ?? 'user_id']: EXAMPLE_USER });
      }
      return;
    case 404:
      if (unavailable) return skip(t, `404: ${capability} is not available on this server yet (it answers 503)`);
      if (kind) setPath(t, t.fullPath.replace(currentId, MISSING_IDS[kind]));
      else if (resource === '/z1/responses' || resource === '/z1/responses/compact') {
        // A conversation to continue that does not exist (another account's or end user's is the same 404).
        setBody(t, { ...jsonBody(t), previous_response_id: MISSING_IDS.response });
        t.expectedCode = 'PREVIOUS_RESPONSE_NOT_FOUND';
      } else return skip(t, '404: no path id to make unknown');
      return;
    case 408:
      if (resource !== '/z1/code/execute') {
        return skip(
          t,
          '408 REQUEST_TIMEOUT needs a body that stops arriving, which Dredd cannot send; covered by test/http/slow-clients.test.ts and the fuzz stage',
        );
      }
      setBody(t, { code: 'import time\nprint("started", flush=True)\ntime.sleep(30)', user_id: 'dredd', timeout: 1 });
      return;
    case 409:
      setBody(t, { ...jsonBody(t), email: ids.accountEmail });
      return;
    case 413: {
      // Over the route's body limit (the operation's x-body-limit-bytes, else the server's 1 MiB); refused
      // before validation.
      setBody(t, { ...jsonBody(t), padding: 'x'.repeat(bodyLimitOf(resource, method) + 64 * 1024) });
      return;
    }
    case 415:
      headers['Content-Type'] = 'text/plain';
      if (!hasBody) t.request.body = 'not json';
      return;
    case 503:
      // A placeholder that is not available yet must answer exactly this; a working server cannot be made to.
      if (unavailable) return;
      return skip(t, `503: ${capability ?? 'this operation'} is available on this server; 503 cannot be provoked`);
    default:
      return skip(t, `${status}: no way to provoke this status is defined`);
  }
});

hooks.beforeEachValidation((t) => {
  const resource = t.origin.resourceName;
  // Gavel compares Content-Type literally: `application/json; charset=utf-8` fails against the documented
  // `application/json`. A charset parameter does not change the media type, so compare the types only.
  const real = t.real.headers;
  const name = Object.keys(real).find((h) => h.toLowerCase() === 'content-type');
  const expected = t.expected.headers?.['Content-Type'];
  if (name && expected && real[name].split(';')[0].trim().toLowerCase() === expected.toLowerCase()) {
    real[name] = expected;
  }

  if (t.expectedCode && Number(t.real.statusCode) === Number(t.expected.statusCode)) {
    let code;
    try {
      code = JSON.parse(t.real.body).code;
    } catch {
      code = undefined;
    }
    if (code !== t.expectedCode) t.fail = `expected error code ${t.expectedCode}, got ${code}`;
  }

  if (resource === '/z1/responses/{response_id}/cancel' && Number(t.real.statusCode) === 200) {
    const problem = checkCancelled(t.real.body);
    if (problem) t.fail = problem;
  }

  t.fail = vs.checkVectorStoreAnswer(t) ?? t.fail; // a file's bytes and text as uploaded
  withoutExampleAliases(t);

  if (resource.startsWith('/z1/users/{user_id}') && Number(t.real.statusCode) === 200) {
    const problem = checkSeededUser(resource, t.real.body);
    if (problem) t.fail = problem;
  }

  const textual = TEXTUAL.find((type) => t.origin.exampleName.endsWith(type));
  if (textual && Number(t.real.statusCode) === 200) {
    // Dredd compares text bodies letter by letter with the example, which only illustrates the
    // page, the metrics or the document: require a non-empty body and leave the rest to the status.
    if (!t.real.body) t.fail = `${textual} body is empty`;
    t.expected.body = t.real.body;
  }

  if (t.origin.exampleName.endsWith('text/event-stream') && Number(t.real.statusCode) === 200) {
    // Dredd has no validator for text/event-stream: check the stream here and leave the rest to Dredd.
    const sent = JSON.parse(t.request.body || '{}');
    const problem = resource.startsWith('/z1/responses')
      ? checkResponseStream(t.real.body, { background: t.request.method === 'GET' })
      : checkChatStream(t.real.body, { includeUsage: sent.stream_options?.include_usage === true });
    if (problem) t.fail = `text/event-stream body: ${problem}`;
    t.expected.body = t.real.body;
    delete t.expected.bodySchema;
  }
});

hooks.afterAll((_transactions, done) => {
  if (skipped.length > 0) console.log(`dredd-hooks: ${skipped.length} transactions skipped on purpose:`);
  for (const [name, reason] of skipped) console.log(`  skip ${name}: ${reason}`);
  done();
});
