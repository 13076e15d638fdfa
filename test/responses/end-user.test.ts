import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PermissionDeniedError } from 'openai';
import { backends } from '../support/databases.js';
import { openaiClient } from '../support/openai-client.js';
import { chatRequests, type ErrorBody, type ResponseBody, type ResponsesHarness, startResponses } from './support.js';

/**
 * The end user of a request (docs/decisions.md, *The end user of a request*): the Responses API takes none as the
 * key's — `default` for a key bound to none, one end user like any other — and a key bound to an end user acts for
 * them alone, on every capability, whatever field names another.
 */
for (const backend of backends()) {
  describe(`the end user a request acts for (${backend})`, () => {
    let h: ResponsesHarness;
    let bobKey: string;

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Noted.' });
      const created = await h.server.request<{ api_key: string; key: { user_id: string | null } }>(
        'POST',
        `/admin/accounts/${h.accountId}/keys`,
        { admin: true, body: { name: 'kiosk', user_id: 'bob' } },
      );
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.key.user_id, 'bob');
      bobKey = created.body.api_key;
    });
    after(() => h?.close());

    it('a response naming no end user acts for "default", whose export holds it and whose erase removes it', async () => {
      const res = await h.client.responses.create({ model: 'PV-TURBO', input: 'My locker is 12.' });
      assert.equal((res as unknown as ResponseBody).user_id, 'default');
      const exported = await h.server.request<{ responses: Array<{ response: { id: string } }> }>(
        'GET',
        '/z1/users/default/export',
        { apiKey: h.apiKey },
      );
      assert.ok(exported.body.responses.some((r) => r.response.id === res.id));
      const erased = await h.server.request<{ erased: { responses: number } }>('DELETE', '/z1/users/default', {
        apiKey: h.apiKey,
      });
      assert.ok(erased.body.erased.responses >= 1);
      assert.equal((await h.server.request('GET', `/z1/responses/${res.id}`, { apiKey: h.apiKey })).status, 404);
    });

    it('a bound key acts for its end user when none is named, in responses and in chat', async () => {
      const bob = openaiClient(h.server.url, bobKey);
      const res = await bob.responses.create({ model: 'PV-TURBO', input: 'Hello' });
      assert.equal((res as unknown as ResponseBody).user_id, 'bob');
      const chat = await h.server.request<{ choices: unknown[] }>('POST', '/z1/chat/completions', {
        apiKey: bobKey,
        body: { model: 'PV-TURBO', messages: [{ role: 'user', content: 'Hi' }] },
      });
      assert.equal(chat.status, 200, chat.text);
      const unbound = await h.server.request<ErrorBody>('POST', '/z1/chat/completions', {
        apiKey: h.apiKey,
        body: { model: 'PV-TURBO', messages: [{ role: 'user', content: 'Hi' }] },
      });
      assert.equal(unbound.status, 400, 'a key bound to none must name the end user of a chat');
      assert.equal(unbound.body.details?.field, 'user_id');
    });

    it('a bound key naming another end user is 403 END_USER_NOT_ALLOWED on every capability, and nothing runs', async () => {
      const before = chatRequests(h.upstream).length;
      const refusals: Array<[string, string, Record<string, unknown> | undefined, string]> = [
        ['POST', '/z1/responses', { model: 'PV-TURBO', input: 'Hi', user: 'alice' }, 'user'],
        ['POST', '/z1/responses', { model: 'PV-TURBO', input: 'Hi', safety_identifier: 'alice' }, 'safety_identifier'],
        [
          'POST',
          '/z1/chat/completions',
          { model: 'PV-TURBO', user_id: 'alice', messages: [{ role: 'user', content: 'Hi' }] },
          'user_id',
        ],
        ['POST', '/z1/memory', { user_id: 'alice', content: 'Likes tea.' }, 'user_id'],
        ['GET', '/z1/rag/documents?user_id=alice', undefined, 'user_id'],
        ['GET', '/z1/users/alice/export', undefined, 'user_id'],
        ['POST', '/z1/conversations', { user_id: 'alice' }, 'user_id'],
      ];
      for (const [method, path, body, field] of refusals) {
        const res = await h.server.request<ErrorBody>(method, path, { apiKey: bobKey, ...(body ? { body } : {}) });
        assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
        assert.equal(res.body.code, 'END_USER_NOT_ALLOWED', path);
        assert.equal(res.body.details?.field, field, path);
      }
      assert.equal(chatRequests(h.upstream).length, before, 'nothing reached the model');
      const sdk = await openaiClient(h.server.url, bobKey)
        .responses.create({ model: 'PV-TURBO', input: 'Hi', user: 'alice' })
        .then(
          () => assert.fail('a bound key acted for another end user'),
          (err: unknown) => err,
        );
      assert.ok(sdk instanceof PermissionDeniedError, String(sdk));
      assert.equal(sdk.code, 'end_user_not_allowed');
    });

    it("another end user's stored response is absent through a bound key, present through the account's key", async () => {
      const alices = await h.client.responses.create({ model: 'PV-TURBO', input: 'Secret: kiwi.', user: 'alice' });
      for (const path of [`/z1/responses/${alices.id}`, `/z1/responses/${alices.id}/input_items`]) {
        const res = await h.server.request<ErrorBody>('GET', path, { apiKey: bobKey });
        assert.equal(res.status, 404, path);
        assert.doesNotMatch(res.text, /kiwi/);
        assert.equal((await h.server.request('GET', path, { apiKey: h.apiKey })).status, 200, path);
      }
      const continued = await h.server.request<ErrorBody>('POST', '/z1/responses', {
        apiKey: bobKey,
        body: { model: 'PV-TURBO', previous_response_id: alices.id, input: 'What was the secret?' },
      });
      assert.equal(continued.status, 404);
      assert.equal(continued.body.code, 'PREVIOUS_RESPONSE_NOT_FOUND');
    });
  });
}
