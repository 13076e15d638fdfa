import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { ResponsesServerEvent } from 'openai/resources/responses/responses';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { backends } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { manualClock } from '../support/server.js';
import { responsesSocketUrl, type SocketMessage, TestSocket } from '../support/websocket.js';
import { chatRequests, type ResponsesHarness, startResponses, streamResponse } from './support.js';

const ANSWER = 'Paris is the capital of France.';

interface UsageRow {
  status: number;
  model: string | null;
  credits: number;
  prompt_tokens: number;
  completion_tokens: number;
  user_id: string | null;
}

/** A turn of the official SDK's ResponsesWS: the events of one `response.create`, up to its end. */
function sdkTurn(ws: ResponsesWS, body: Record<string, unknown>): Promise<ResponsesServerEvent[]> {
  const events: ResponsesServerEvent[] = [];
  return new Promise((resolve) => {
    const onEvent = (event: ResponsesServerEvent) => {
      events.push(event);
      if (event.type === 'error' || /^response\.(completed|incomplete|failed)$/.test(event.type)) {
        ws.off('event', onEvent);
        resolve(events);
      }
    };
    ws.on('event', onEvent);
    ws.send({ type: 'response.create', ...body } as Parameters<ResponsesWS['send']>[0]);
  });
}

/** An event with what differs between two runs of one request (ids, times) made the same. */
function comparable(event: unknown): unknown {
  return JSON.parse(
    JSON.stringify(event)
      .replace(/"(resp|msg)_[0-9a-f]{32}"/g, '"$1_id"')
      .replace(/"(created_at|completed_at|retrieval_time_ms)":\d+/g, '"$1":0'),
  );
}

/**
 * WebSocket mode of the Responses API (GET /z1/responses with Upgrade: websocket): each `response.create` message
 * is a POST /z1/responses answered with its events, over the official SDK's ResponsesWS and a raw `ws` client.
 */
for (const backend of backends()) {
  describe(`responses over a WebSocket (${backend})`, () => {
    let h: ResponsesHarness;
    const clock = manualClock(Date.now());
    const open = (apiKey = h.apiKey) =>
      TestSocket.open(responsesSocketUrl(h.server.url), { Authorization: `Bearer ${apiKey}` });
    const rows = (accountId: string) =>
      h.server.usageRows<UsageRow>(
        `SELECT status, model, credits, prompt_tokens, completion_tokens, user_id
         FROM usage_records WHERE account_id = $1 AND endpoint = 'createResponse' ORDER BY id`,
        [accountId],
      );
    const summary = (r: UsageRow) => [
      Number(r.status),
      r.model,
      Number(r.credits),
      Number(r.prompt_tokens),
      Number(r.completion_tokens),
      r.user_id,
    ];

    before(async () => {
      h = await startResponses(backend, {
        defaultText: ANSWER,
        clock,
        config: { tiers: { free: { rpm: 2 }, startup: { rpm: 10_000 }, business: { rpm: 10_000 } } },
      });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    it("the SDK's ResponsesWS: two responses on one socket, each the events SSE sends, each stored, charged and recorded", async () => {
      const account = await h.server.createAccount('business', 10);
      const client = h.client.withOptions({ apiKey: account.apiKey });
      const ws = new ResponsesWS(client);
      ws.on('error', () => undefined);
      try {
        const body = {
          model: 'PV-TURBO',
          user_id: 'alice',
          skip_cache: true,
          input: `Capital of France? (${backend})`,
        };
        const first = await sdkTurn(ws, body);
        const second = await sdkTurn(ws, { ...body, input: 'And of Italy?' });
        for (const events of [first, second]) {
          assert.deepEqual(
            events.map((e) => e.sequence_number),
            events.map((_, i) => i),
            'numbered from 0 per response',
          );
          assert.equal(events.at(-1)?.type, 'response.completed');
        }
        const firstDone = first.at(-1) as Extract<ResponsesServerEvent, { type: 'response.completed' }>;
        const secondDone = second.at(-1) as Extract<ResponsesServerEvent, { type: 'response.completed' }>;
        const [message] = firstDone.response.output;
        assert.equal(
          message?.type === 'message' && message.content[0]?.type === 'output_text' && message.content[0].text,
          ANSWER,
        );
        assert.notEqual(firstDone.response.id, secondDone.response.id);

        const sse = await streamResponse(h.server, account.apiKey, body);
        assert.deepEqual(
          first.map(comparable),
          sse.events.map((e) => comparable(e.data)),
          'the same events as SSE',
        );

        for (const done of [firstDone, secondDone]) {
          const stored = await h.server.request<{ id: string; status: string }>(
            'GET',
            `/z1/responses/${done.response.id}`,
            { apiKey: account.apiKey },
          );
          assert.equal(stored.status, 200, stored.text);
          assert.equal(stored.body.status, 'completed');
        }
        const recorded = await eventually(
          () => rows(account.accountId),
          (r) => r.length === 3,
        );
        assert.deepEqual(recorded.map(summary), [
          [200, 'PV-TURBO', 1, 12, 7, 'alice'],
          [200, 'PV-TURBO', 1, 12, 7, 'alice'],
          [200, 'PV-TURBO', 1, 12, 7, 'alice'],
        ]);
        const usage = await h.server.request<{ credits: { balance: number } }>('GET', '/z1/usage', {
          apiKey: account.apiKey,
        });
        assert.equal(usage.body.credits.balance, 7);
      } finally {
        ws.close();
      }
    });

    it('store: false is continued on its socket (previous_response_id, only the new input), never stored', async () => {
      const socket = await open();
      try {
        const [, , ...rest] = await socket.turn({
          type: 'response.create',
          model: 'PV-TURBO',
          store: false,
          input: 'Remember the code word: cobalt.',
        });
        const first = rest.at(-1)?.response;
        assert.equal(first?.status, 'completed');
        const stored = await h.server.request('GET', `/z1/responses/${first?.id}`, { apiKey: h.apiKey });
        assert.equal(stored.status, 404, 'store: false is not stored');

        const second = await socket.turn({
          type: 'response.create',
          model: 'PV-TURBO',
          store: false,
          previous_response_id: first?.id,
          input: 'What is the code word?',
        });
        const done = second.at(-1);
        assert.equal(done?.type, 'response.completed', JSON.stringify(done));
        assert.equal(done?.response?.previous_response_id, first?.id);
        const sent = chatRequests(h.upstream).at(-1);
        assert.deepEqual(
          sent?.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content]),
          [
            ['user', 'Remember the code word: cobalt.'],
            ['assistant', ANSWER],
            ['user', 'What is the code word?'],
          ],
        );
      } finally {
        await socket.close();
      }
    });

    it('previous_response_not_found on a new socket, and after a failed continuation; the socket stays usable', async () => {
      const first = await open();
      const created = (await first.turn({ type: 'response.create', model: 'PV-TURBO', store: false, input: 'Hi' })).at(
        -1,
      );
      const id = created?.response?.id;
      assert.ok(id);
      const continuation = (extra: Record<string, unknown>) => ({
        type: 'response.create',
        model: 'PV-TURBO',
        store: false,
        previous_response_id: id,
        input: 'Go on.',
        ...extra,
      });

      const second = await open();
      const [missing] = await second.turn(continuation({}));
      assertError(missing, 404, 'previous_response_not_found', 'previous_response_id');
      const recovered = await second.turn({ type: 'response.create', model: 'PV-TURBO', store: false, input: 'Hi' });
      assert.equal(recovered.at(-1)?.type, 'response.completed', 'the socket answers the next message');
      await second.close();

      const [refused] = await first.turn(
        continuation({ input: [{ type: 'function_call_output', call_id: 'call_missing', output: '42' }] }),
      );
      assert.equal(refused?.type, 'error');
      assert.equal(refused?.status, 400, JSON.stringify(refused));
      const [evicted] = await first.turn(continuation({}));
      assertError(evicted, 404, 'previous_response_not_found', 'previous_response_id');
      await first.close();
    });

    it('a message is validated as the request body; stream is ignored, background refused; each is an error message', async () => {
      const socket = await open();
      try {
        const base = { type: 'response.create', model: 'PV-TURBO', input: 'Hi' };
        assertError((await socket.turn('{"type":')).at(0), 400, 'invalid_json', 'body');
        assertError((await socket.turn({ ...base, type: 'response.cancel' })).at(0), 400, 'invalid_parameter', 'type');
        assertError((await socket.turn({ ...base, temprature: 1 })).at(0), 400, 'invalid_parameter', 'temprature');
        assertError((await socket.turn({ ...base, model: 'GPT-9' })).at(0), 400, 'invalid_model', 'model');
        assertError((await socket.turn({ ...base, background: true })).at(0), 400, 'invalid_parameter', 'background');
        const streamed = await socket.turn({ ...base, stream: true });
        assert.equal(streamed.at(-1)?.type, 'response.completed');
      } finally {
        await socket.close();
      }
    });

    it('past the rate limit a message gets the 429 error message; the socket is answered again once the window passed', async () => {
      const limited = await h.server.createAccount('free', 100);
      const socket = await open(limited.apiKey);
      try {
        const body = { type: 'response.create', model: 'PV-TURBO', input: 'Hi', skip_cache: true };
        for (let i = 0; i < 2; i++) assert.equal((await socket.turn(body)).at(-1)?.type, 'response.completed');
        const [refused] = await socket.turn(body);
        assertError(refused, 429, 'rate_limit_exceeded', null);
        assert.equal(chatRequests(h.upstream).length, 2, 'nothing asked upstream');
        clock.advance(61_000);
        assert.equal((await socket.turn(body)).at(-1)?.type, 'response.completed');
        const recorded = await eventually(
          () => rows(limited.accountId),
          (r) => r.length === 4,
        );
        assert.deepEqual(
          recorded.map((r) => [Number(r.status), Number(r.credits)]),
          [
            [200, 1],
            [200, 1],
            [429, 0],
            [200, 1],
          ],
        );
      } finally {
        await socket.close();
      }
    });

    it('a client that closes its socket mid-response aborts the upstream request; the row says 499', async () => {
      const account = await h.server.createAccount('business', 10);
      h.upstream.script({ kind: 'slow', chunks: Array.from({ length: 50 }, (_, i) => `word${i} `), delayMs: 100 });
      const socket = await open(account.apiKey);
      socket.ws.send(JSON.stringify({ type: 'response.create', model: 'PV-TURBO', input: 'Tell me everything.' }));
      let message: SocketMessage | undefined;
      do message = await socket.next();
      while (message && message.type !== 'response.output_text.delta');
      socket.ws.terminate();
      await h.upstream.waitForDisconnects(1, 5000);
      const recorded = await eventually(
        () => rows(account.accountId),
        (r) => r.length === 1,
      );
      assert.equal(Number(recorded[0]?.status), 499);
    });
  });
}

function assertError(message: SocketMessage | undefined, status: number, code: string, param: string | null): void {
  assert.equal(message?.type, 'error', JSON.stringify(message));
  assert.equal(message?.status, status, JSON.stringify(message));
  assert.equal(message?.error?.code, code, JSON.stringify(message));
  assert.equal(message?.error?.param, param, JSON.stringify(message));
  assert.deepEqual(Object.keys(message?.error ?? {}).sort(), ['code', 'message', 'param', 'type']);
}
