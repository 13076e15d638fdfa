// The Responses API in the dredd run (dredd-hooks.cjs, docs/contract-testing.md): the stored responses beforeAll
// creates, the first of them being the capability's probe (creating a response answers 503 where chat does), and
// what a 2xx transaction of a stored response needs: a real id (or a skip, when none could be created) and, for
// getResponse, the keys of createResponse's documented example. createResponse's provoked 400, 402, 403 and 404 are
// made with the other operations' in dredd-hooks.cjs; its stream is checked by response-stream-check.cjs.
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
  }
}

/**
 * beforeEach of a 2xx transaction: the reason to skip it when it needs a stored response and none could be created;
 * else undefined, with getResponse's expected body set.
 */
function expectStoredResponse(t, kind, resource, method) {
  if (kind === 'response' && !ids.response) {
    return 'no stored response to read: creating one answered 503 on this server';
  }
  if (resource === '/z1/responses/{response_id}' && method === 'GET' && createdResponseBody) {
    // The operation has no example of its own, and Dredd's example made from the schema has every property of
    // every kind of output item (a message has no call_id). A stored response is returned as it was created:
    // expect the keys of createResponse's documented example.
    t.expected.body = createdResponseBody;
  }
  return undefined;
}

module.exports = { storedResponse, rememberCreatedExample, createFixtureResponses, expectStoredResponse };
