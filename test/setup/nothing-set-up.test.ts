import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatBody, startTestServer } from '../support/server.js';

describe('a service on a machine where nothing is set up', () => {
  it('starts anyway, and every endpoint that needs a missing piece says what to run', async () => {
    const server = await startTestServer('sqlite', {
      config: { localModel: undefined, sandbox: { bwrapPath: '/nonexistent/bwrap' } },
    });
    try {
      const { apiKey } = await server.createAccount('startup');
      const chat = await server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody() });
      assert.equal(chat.status, 503);
      assert.equal(chat.body.code, 'SERVICE_UNAVAILABLE');
      assert.match(String(chat.body.message), /No local model in .*: run scripts\/setup \(fetches the default model/);
      const code = await server.request('POST', '/z1/code/execute', {
        apiKey,
        body: { user_id: 'u', code: 'print(1)' },
      });
      assert.equal(code.status, 503);
      assert.equal(code.body.code, 'SANDBOX_UNAVAILABLE');
      assert.match(String(code.body.message), /run scripts\/setup as root, or install it with: sudo apt-get install/);
      const ready = await server.request<{ checks: Record<string, { ok: boolean; detail: string }> }>(
        'GET',
        '/z1/health/ready',
      );
      assert.equal(ready.status, 503);
      assert.match(ready.body.checks.local_model?.detail ?? '', /run scripts\/setup/);
    } finally {
      await server.close();
    }
  });
});
