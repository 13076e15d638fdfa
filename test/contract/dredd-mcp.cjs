// The MCP server in the dredd run (dredd-hooks.cjs): POST /z1/mcp's statuses that its example (a tools/list request)
// does not reach the common way. 202 is a notification; 402 a tool call through the free account's key (a balance of
// 0; a listing costs nothing); 403 the key bound to one end user naming another in X-PV-User.
const { EXAMPLE_USER } = require('./dredd-facts.cjs');
const { ids } = require('./dredd-server.cjs');

const TOOL_CALL = {
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 'recall', arguments: { query: 'x' } },
};

/** beforeEach of a /z1/mcp transaction: true when it is ready (dredd-hooks.cjs returns), false for the common way. */
function mcpTransaction(t, status) {
  if (t.origin.resourceName !== '/z1/mcp') return false;
  const headers = t.request.headers;
  // Dredd sends the operation's optional header parameters empty, which their schemas refuse: left out instead.
  for (const name of ['mcp-protocol-version', 'x-pv-user']) if (headers[name] === '') delete headers[name];
  if (status === 202) {
    t.request.body = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return true;
  }
  if (status === 402) {
    t.request.body = JSON.stringify(TOOL_CALL);
    headers.Authorization = `Bearer ${ids.freeKey}`;
    headers['X-PV-User'] = 'dredd';
    t.expectedCode = 'INSUFFICIENT_CREDITS';
    return true;
  }
  if (status === 403) {
    t.request.body = JSON.stringify(TOOL_CALL);
    headers.Authorization = `Bearer ${ids.boundKey}`;
    headers['X-PV-User'] = EXAMPLE_USER;
    t.expectedCode = 'END_USER_NOT_ALLOWED';
    return true;
  }
  return false;
}

module.exports = { mcpTransaction };
