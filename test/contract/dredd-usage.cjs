// The account holder's reads in the dredd run (dredd-hooks.cjs): the usage series' CSV, the list of end users, a
// request log to read back, and the models' list, whose example shows an alias the contract server has none of.

// Media types whose bodies Dredd would compare letter by letter with the example: only a non-empty body is asked.
const { ids } = require('./dredd-server.cjs');

const TEXTUAL = ['text/html', 'text/plain', 'text/csv', 'application/yaml'];

function setQuery(t, mutate) {
  const url = new URL(t.fullPath, 'http://x');
  mutate(url.searchParams);
  t.fullPath = url.pathname + (url.search || '');
  t.request.uri = t.fullPath;
}

/** beforeEach of GET /z1/usage's 2xx, /z1/logs' 403 and /z1/users' 404: true when it is ready, false otherwise. */
function usageTransaction(t, status) {
  const resource = t.origin.resourceName;
  if (resource === '/z1/usage' && status === 200) {
    // The CSV is asked for by `format=csv` with a `group_by` (not by Accept); only it is an attachment.
    if (t.origin.exampleName.endsWith('text/csv')) {
      setQuery(t, (q) => {
        q.set('format', 'csv');
        q.set('group_by', 'key');
      });
      t.expected.headers['Content-Type'] = 'text/csv';
    } else delete t.expected.headers['Content-Disposition'];
    return true;
  }
  if (resource === '/z1/logs' && status === 403) {
    // A key bound to one end user asking for another's logs (GET: in the query, where a body would not be read).
    t.request.headers.Authorization = `Bearer ${ids.boundKey}`;
    setQuery(t, (q) => q.set('user_id', 'user-123'));
    t.expectedCode = 'END_USER_NOT_ALLOWED';
    return true;
  }
  if (resource === '/z1/users' && status === 404) {
    setQuery(t, (q) => q.set('after', 'dredd-no-such-end-user')); // a page after an end user the account lacks
    t.expectedCode = 'NOT_FOUND';
    return true;
  }
  return false;
}

/** The example's request id, on a request of the contract account: GET /z1/logs/{request_id} then reads its log. */
async function seedRequestLog(must) {
  await must(200, 'GET', '/z1/models', { headers: { 'X-Request-Id': 'req_9f2c1b7e5d4a43c8b1e0f6a7d2c3b4e5' } });
}

/**
 * beforeEachValidation: Gavel checks a JSON list entry by entry against the example's. The models' example shows an
 * alias (`alias_of`), which the contract server has none configured of: compare with its PV models alone.
 */
function withoutExampleAliases(t) {
  if (t.origin.resourceName !== '/z1/models' || Number(t.real.statusCode) !== 200 || !t.expected.body) return;
  const example = JSON.parse(t.expected.body);
  example.data = example.data.filter((model) => model.alias_of === undefined);
  t.expected.body = JSON.stringify(example);
}

module.exports = { TEXTUAL, seedRequestLog, usageTransaction, withoutExampleAliases };
