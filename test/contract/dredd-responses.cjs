// The Responses API in the dredd run (dredd-hooks.cjs, docs/contract-testing.md): the stored responses beforeAll
// creates, the first of them being the capability's probe (creating a response answers 503 where chat does), and
// what a 2xx transaction of a stored response needs: a real id (or a skip, when none could be created) and, for
// getResponse, the keys of createResponse's documented example. Two of them are background responses: getResponse's
// text/event-stream variant reads the events of one (`?stream=true`: only a background response's can be read
// again), and cancelResponse cancels the other (on the mock upstream it has usually ended by then, and the contract
// answers an ended one as it ended). createResponse's provoked 400, 402, 403 and 404 are made with the other
// operations' in dredd-hooks.cjs; the streams are checked by response-stream-check.cjs.
const { available, ids, must, probe } = require('./dredd-server.cjs');

let createdResponseBody; // the documented example of POST /z1/responses' 200: what GET /z1/responses/{id} returns

/**
 * The body of a fixture response of `userId` (input items: a message of input_text parts); without memory, so that
 * it adds nothing to the end user's memories after it is answered.
 */
function responseBody(userId, text) {
  return {
    model: 'PV-TURBO',
    user_id: userId,
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text }] }],
    max_output_tokens: 8,
    use_memory: false,
  };
}

/** A stored response of `userId`, made through the API: its id. */
async function storedResponse(userId, text) {
  return (await must(200, 'POST', '/z1/responses', { body: responseBody(userId, text) })).id;
}

/** beforeAll, first: remember createResponse's documented 200 example (see `expectStoredResponse`). */
function rememberCreatedExample(transactions) {
  createdResponseBody = transactions.find(
    (t) =>
      t.origin.resourceName === '/z1/responses' &&
      t.request.method === 'POST' &&
      t.expected.statusCode === '200' &&
      t.origin.exampleName.endsWith('application/json'),
  )?.expected.body;
}

/** beforeAll: the probe of the `responses` capability, and the stored responses of the fixture end user. */
async function createFixtureResponses() {
  // Creating a response is the probe; the stored response it makes is the one GET and input_items read.
  const first = await probe('responses', 'POST', '/z1/responses', responseBody('dredd-fixture', 'The fixture.'));
  if (available.responses === true) {
    if (first.status !== 200)
      throw new Error(`dredd-hooks setup: POST /z1/responses answered ${first.status}: ${first.text}`);
    ids.response = first.json.id;
    // DELETE comes before input_items in the document: it deletes a response of its own.
    ids.deleteResponse = await storedResponse('dredd-fixture', 'The response to delete.');
    ids.backgroundResponse = await backgroundResponse('A background response to follow.');
    ids.cancelResponse = await backgroundResponse('A background response to cancel.');
  }
}

/** A background response of the fixture end user: answered at once, `queued`. Its id. */
async function backgroundResponse(text) {
  const queued = await must(200, 'POST', '/z1/responses', {
    body: { ...responseBody('dredd-fixture', text), background: true },
  });
  if (queued.status !== 'queued' || queued.background !== true) {
    throw new Error(`dredd-hooks setup: a background response answered ${queued.status}, not queued`);
  }
  return queued.id;
}

/** The real response id for a 2xx transaction on a stored response's path. */
function responseIdOf(resource, method) {
  if (method === 'DELETE') return ids.deleteResponse;
  if (resource.endsWith('/cancel')) return ids.cancelResponse;
  return ids.response;
}

/** What is wrong with cancelResponse's 200: it must be the response cancelled, or as it ended first; or undefined. */
function checkCancelled(body) {
  let response;
  try {
    response = JSON.parse(body);
  } catch {
    return undefined; // not JSON: Dredd's own validation says so
  }
  if (response.id !== ids.cancelResponse) return `cancel answered ${response.id}, not ${ids.cancelResponse}`;
  if (!['cancelled', 'completed', 'incomplete', 'failed'].includes(response.status)) {
    return `the response cancelled is ${response.status}, neither cancelled nor ended`;
  }
  return undefined;
}

/**
 * beforeEach of a 2xx transaction: the reason to skip it when it needs a stored response and none could be created;
 * else undefined, with the expected body of getResponse and cancelResponse set and getResponse's stream asked for.
 */
function expectStoredResponse(t, kind, resource, method) {
  if (kind === 'response' && !ids.response) {
    return 'no stored response to read: creating one answered 503 on this server';
  }
  const answersResponse =
    (resource === '/z1/responses/{response_id}' && method === 'GET') ||
    resource === '/z1/responses/{response_id}/cancel';
  if (answersResponse && createdResponseBody) {
    // These operations have no example of their own, and Dredd's example made from the schema has every property of
    // every kind of output item (a message has no call_id). A stored response is returned as it was created (or as
    // it ended): expect the keys of createResponse's documented example.
    t.expected.body = createdResponseBody;
  }
  if (resource === '/z1/responses/{response_id}' && method === 'GET' && t.origin.exampleName.endsWith('event-stream')) {
    // A background response's events, all of them (no starting_after), chosen by the query, not the Accept header.
    t.fullPath = `${t.fullPath.replace(ids.response, ids.backgroundResponse)}?stream=true`;
    t.request.uri = t.fullPath;
  }
  return undefined;
}

module.exports = {
  storedResponse,
  rememberCreatedExample,
  createFixtureResponses,
  expectStoredResponse,
  responseIdOf,
  checkCancelled,
};
