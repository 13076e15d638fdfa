import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MockBehaviour, type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * What a tenant reads when an upstream fails: the PV model and a code, and for a request the upstream refused
 * as invalid its `param`/`code` when they are plain tokens; never the upstream's host, port, model name or own
 * words (which go to the server's log). Chat completions and responses, streamed and not, over real HTTP.
 */
const SECRET_MODEL = 'acme-secret-model-7b';

describe('upstream failures as tenants read them', () => {
  let upstream: MockUpstream;
  let server: TestServer;
  let apiKey = '';
  let host = '';

  before(async () => {
    upstream = await startMockUpstream();
    host = new URL(upstream.url).host;
    const target = {
      provider: 'openai-compatible' as const,
      baseUrl: upstream.url,
      model: SECRET_MODEL,
      maxRetries: 0,
    };
    server = await startTestServer('sqlite', {
      config: { tiers: { business: { rpm: 10_000 } }, routing: { 'PV-STANDARD': [target] } },
    });
    apiKey = (await server.createAccount('business', 10_000)).apiKey;
  });
  after(async () => {
    await server?.close();
    await upstream?.close();
  });

  const post = async (path: string, body: Record<string, unknown>) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const chat = { model: 'PV-STANDARD', skip_cache: true };
  const calls = {
    chat: () => post('/z1/chat/completions', chatBody(chat)),
    'chat, streamed': () => post('/z1/chat/completions', chatBody({ ...chat, stream: true })),
    responses: () => post('/z1/responses', { model: 'PV-STANDARD', input: 'Tell me a story.' }),
    'responses, streamed': () =>
      post('/z1/responses', { model: 'PV-STANDARD', input: 'Tell me a story.', stream: true }),
  };

  /** Nothing of the upstream in what the tenant reads. */
  function assertNothingOfTheUpstream(text: string, upstreamWords: string[] = []): void {
    for (const secret of [host, upstream.url, SECRET_MODEL, 'openai-compatible:', ...upstreamWords]) {
      assert.ok(!text.includes(secret), `the tenant reads ${JSON.stringify(secret)}: ${text}`);
    }
  }

  const refusal = (param: string, code: string): MockBehaviour => ({
    kind: 'status',
    status: 400,
    body: {
      error: {
        message: `Model ${SECRET_MODEL} at http://${host} refuses this`,
        type: 'invalid_request_error',
        param,
        code,
      },
    },
  });

  for (const [name, call] of Object.entries(calls)) {
    it(`${name}: a request the upstream refuses is 400 naming the PV model and the upstream's param and code`, async () => {
      upstream.scriptModel(SECRET_MODEL, refusal('messages[0].content', 'context_length_exceeded'));
      try {
        const res = await call();
        assert.match(res.text, /INVALID_PARAMETER|invalid_parameter/);
        assert.match(
          res.text,
          /model PV-STANDARD: the upstream refused the request as invalid \(HTTP 400; param: messages\[0\]\.content; code: context_length_exceeded\)/,
        );
        assertNothingOfTheUpstream(res.text, ['refuses this']);
        if (!name.endsWith('streamed')) assert.equal(res.status, 400);
      } finally {
        upstream.scriptModel(SECRET_MODEL, undefined);
      }
    });

    it(`${name}: an upstream's param or code that carries its model name or address is left out`, async () => {
      upstream.scriptModel(SECRET_MODEL, refusal(`${SECRET_MODEL}.messages`, '127.0.0.1'));
      try {
        const res = await call();
        assert.match(res.text, /the upstream refused the request as invalid \(HTTP 400\)/);
        assertNothingOfTheUpstream(res.text, ['refuses this', '127.0.0.1']);
      } finally {
        upstream.scriptModel(SECRET_MODEL, undefined);
      }
    });

    it(`${name}: an upstream that fails is 502 naming the PV model and the status only`, async () => {
      upstream.scriptModel(SECRET_MODEL, {
        kind: 'status',
        status: 503,
        body: { error: { message: `${SECRET_MODEL} overloaded on ${host}`, type: 'server_error' } },
      });
      try {
        const res = await call();
        assert.match(res.text, /UPSTREAM_ERROR|upstream_error/);
        assert.match(res.text, /model PV-STANDARD: the upstream failed \(HTTP 503\)/);
        assertNothingOfTheUpstream(res.text, ['overloaded']);
        if (!name.endsWith('streamed')) assert.equal(res.status, 502);
      } finally {
        upstream.scriptModel(SECRET_MODEL, undefined);
      }
    });
  }

  for (const name of ['chat, streamed', 'responses, streamed'] as const) {
    it(`${name}: a stream the upstream cuts after it started says so without naming the upstream`, async () => {
      upstream.script({ kind: 'disconnect', afterChunks: 2 });
      const res = await calls[name]();
      assert.equal(res.status, 200, 'the stream had started');
      assert.match(res.text, /model PV-STANDARD: the connection to the upstream failed/);
      assertNothingOfTheUpstream(res.text);
    });
  }
});
