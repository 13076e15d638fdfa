// What the dredd hooks (dredd-hooks.cjs) know of the contract beforehand: its example ids, ids that name nothing,
// the error code each provoked status carries, how each 403 is provoked, the statuses no request can provoke, which
// capability answers a path, and each operation's body limit (read from the contract). No state, no requests.

// The ids used as examples in openapi/openapi.yaml.
const EXAMPLE_IDS = {
  memory: 'mem_5b1f0c9e2d4a',
  document: 'doc_7c2e9a0b1f3d',
  account: 'acct_3kTMd9e2XwQpL7vB',
  key: 'key_9xQ2mL4nB7vC1zR8',
  response: 'resp_8f3a1c2b9d7e4f60a1b2c3d4e5f60718',
  conversation: 'conv_4e5f60718293a4b5c6d7e8f9011b2c3d',
  item: 'msg_4e5f60718293a4b5c6d7e8f9011b2c3d',
  file: 'file-4e5f60718293a4b5c6d7e8f9',
  vectorStore: 'vs_4e5f60718293a4b5c6d7e8f9',
  batch: 'vsfb_4e5f60718293a4b5c6d7e8f9',
};
// Well-formed ids that name nothing, for the 404 transactions.
const MISSING_IDS = {
  memory: 'mem_000000000000',
  document: 'doc_000000000000',
  account: 'acct_0000000000000000',
  key: 'key_0000000000000000',
  response: 'resp_00000000000000000000000000000000',
  conversation: 'conv_00000000000000000000000000000000',
  item: 'msg_00000000000000000000000000000000',
  file: 'file-000000000000000000000000',
  vectorStore: 'vs_000000000000000000000000',
  batch: 'vsfb_000000000000000000000000',
  model: 'PV-NONEXISTENT',
};
const TOO_LONG_ID = 'x'.repeat(65); // every path id is maxLength 64: a 400 before any lookup
// The end user of the examples, the one the hooks export and erase instead (with data of their own), and an end
// user id over the maxLength of 256.
const EXAMPLE_USER = 'user-123';
const ERASED_USER = 'dredd-erased';
const TOO_LONG_USER = 'u'.repeat(257);
// The end user the hooks' bound key is bound to: naming any other through it is 403 END_USER_NOT_ALLOWED.
const BOUND_USER = 'dredd-bound';

// The error code each provoked status must carry (400, 403 and 404 are refined per operation in dredd-hooks.cjs).
const EXPECTED_CODE = {
  400: 'INVALID_PARAMETER',
  401: 'UNAUTHORIZED',
  402: 'INSUFFICIENT_CREDITS',
  403: 'END_USER_NOT_ALLOWED',
  404: 'NOT_FOUND',
  408: 'EXECUTION_TIMEOUT',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  503: 'SERVICE_UNAVAILABLE',
};

// The 403s the tier decides, provoked by the free account: a model it does not include (PV-ADVANCED) or a feature
// (the SLA report). Every other documented 403 is a key bound to one end user naming another (END_USER_NOT_ALLOWED),
// in the field of the request that names the end user (`user_id`, unless listed here; a path or a query naming one
// already names the example's user-123).
const TIER_FORBIDDEN = {
  '/z1/chat/completions': 'MODEL_NOT_ALLOWED',
  '/z1/responses': 'MODEL_NOT_ALLOWED',
  '/z1/responses/compact': 'MODEL_NOT_ALLOWED',
  '/z1/sla': 'FEATURE_NOT_ALLOWED',
};
const END_USER_FIELD = { '/z1/embeddings': 'user' };

// Statuses no request can provoke from outside against a healthy contract server.
const SKIP_STATUS = {
  429: 'the contract server raises the volume limits on purpose; 429 is covered by the test suite',
  500: 'an unexpected internal error cannot be provoked on purpose',
  502: 'needs a failing model upstream; covered by the provider and chat tests',
  504: 'needs an upstream that does not answer in time; covered by the provider tests',
};

// Operations whose engine may not be on this server yet: the placeholder answers 503 SERVICE_UNAVAILABLE
// (documented). Probed in beforeAll; see `capabilityOf`.
function capabilityOf(path) {
  if (path.startsWith('/z1/memory')) return 'memory';
  if (path.startsWith('/z1/rag/')) return 'rag';
  if (path === '/z1/sla') return 'sla';
  if (path === '/metrics') return 'metrics';
  if (path === '/z1/code/execute') return 'code';
  if (path === '/z1/chat/completions') return 'chat';
  // Creating (or compacting) a response is a chat completion in another wire format: it answers 503 where chat does.
  // Stored responses (GET, DELETE, input_items, cancel) are read from the database and have no placeholder.
  if (path === '/z1/responses' || path === '/z1/responses/compact') return 'responses';
  if (path === '/z1/embeddings') return 'embeddings';
  return null;
}

// The contract's body limits: an operation's x-body-limit-bytes, else the server's 1 MiB.
const contract = require('yaml').parse(
  require('node:fs').readFileSync(require('node:path').join(__dirname, '../../openapi/openapi.yaml'), 'utf8'),
);
function bodyLimitOf(resource, method) {
  return contract.paths[resource]?.[method.toLowerCase()]?.['x-body-limit-bytes'] ?? 1024 * 1024;
}

/**
 * Idempotency-Key: the contract's example is one key for every POST (each would be another request under a used
 * key: 422), so it is not sent; its 409s need a keyed request still running or an answer over the size cap
 * (test/idempotency provokes them). The reason to skip the transaction, or undefined.
 */
function idempotencySkip(headers, status, resource) {
  for (const h of Object.keys(headers)) if (h.toLowerCase() === 'idempotency-key') delete headers[h];
  if (status === 409 && resource !== '/admin/accounts') {
    return '409: IDEMPOTENCY_KEY_IN_USE or IDEMPOTENCY_RESPONSE_NOT_STORED (test/idempotency provokes them)';
  }
}

module.exports = {
  idempotencySkip,
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
};
