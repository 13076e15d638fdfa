// The usage series' CSV and the list of end users in the dredd run (dredd-hooks.cjs).

// Media types whose bodies Dredd would compare letter by letter with the example: only a non-empty body is asked.
const TEXTUAL = ['text/html', 'text/plain', 'text/csv', 'application/yaml'];

function setQuery(t, mutate) {
  const url = new URL(t.fullPath, 'http://x');
  mutate(url.searchParams);
  t.fullPath = url.pathname + (url.search || '');
  t.request.uri = t.fullPath;
}

/** beforeEach of GET /z1/usage's 2xx and GET /z1/users's 404: true when it is ready, false for the common way. */
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
  if (resource === '/z1/users' && status === 404) {
    setQuery(t, (q) => q.set('after', 'dredd-no-such-end-user')); // a page after an end user the account lacks
    t.expectedCode = 'NOT_FOUND';
    return true;
  }
  return false;
}

module.exports = { TEXTUAL, usageTransaction };
