import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resolveRouting } from '../../src/config/routing.js';
import { servedBy, statedParameters } from '../../src/models/served-by.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface ModelBody {
  id: string;
  kind: string;
  intended_use: string;
  served_by: { kind: string; model: string; host: string | null; note: string };
}

const CHAT_MODELS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'];

/**
 * Honest tiers (issue 57): `/z1/models` says what serves each PV model now, the local file or the upstream, and
 * what that model is good for, derived from the model itself rather than from the tier's marketing line.
 */
describe('what serves each model (GET /z1/models)', () => {
  describe('a fresh install: every tier on the one local model', () => {
    let server: TestServer;
    let apiKey: string;
    before(async () => {
      // The committed tiny model (stories260K.gguf) stands for SmolLM2-135M: same route, another file, whose name
      // states its size in thousands, read as no size (a `k` is a context length as often).
      server = await startTestServer('sqlite');
      ({ apiKey } = await server.createAccount('enterprise', 10));
    });
    after(() => server?.close());

    it('names the local file for all four, says it is small and that the four share it', async () => {
      const list = await server.request<{ data: ModelBody[] }>('GET', '/z1/models', { apiKey });
      assert.equal(list.status, 200, list.text);
      const chat = list.body.data.filter((m) => m.kind === 'chat');
      assert.deepEqual(
        chat.map((m) => m.id),
        CHAT_MODELS,
      );
      for (const model of chat) {
        assert.deepEqual(model.served_by, {
          kind: 'local',
          model: 'stories260K',
          host: null,
          note: 'local model of unstated size: what it is good for is what its model card says; PV-TURBO, PV-STANDARD, PV-ADVANCED and PV-CODEX all run it',
        });
      }
      // The tier's own line is kept; the server's note is what tells the truth about it.
      assert.equal(chat.find((m) => m.id === 'PV-ADVANCED')?.intended_use, 'complex reasoning, analysis');
      const one = await server.request<ModelBody>('GET', '/z1/models/PV-ADVANCED', { apiKey });
      assert.deepEqual(
        one.body,
        chat.find((m) => m.id === 'PV-ADVANCED'),
      );
    });
  });

  describe('one tier routed to an upstream, with the local engine as its fallback', () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    before(async () => {
      upstream = await startMockUpstream();
      const baseUrl = upstream.url.replace('http://', 'http://operator:hunter2@');
      server = await startTestServer('sqlite', {
        config: {
          routing: {
            'PV-ADVANCED': [
              { provider: 'openai-compatible', baseUrl, model: 'Qwen2.5-72B-Instruct', apiKey: 'sk-never-shown-123' },
              { provider: 'local', model: 'local' },
            ],
            'PV-CODEX': [{ provider: 'openai-compatible', baseUrl: upstream.url, model: 'gpt-4o' }],
          },
        },
      });
      ({ apiKey } = await server.createAccount('enterprise', 10));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });

    it('names the upstream host and model, never its key or credentials, and counts the fallback', async () => {
      const list = await server.request<{ data: ModelBody[] }>('GET', '/z1/models', { apiKey });
      const served = Object.fromEntries(list.body.data.map((m) => [m.id, m.served_by]));
      const host = new URL(upstream.url).host;
      assert.deepEqual(served['PV-ADVANCED'], {
        kind: 'upstream',
        model: 'Qwen2.5-72B-Instruct',
        host,
        note: `upstream (${host}) large model (72B parameters): complex reasoning, analysis and code; 1 fallback after it`,
      });
      assert.deepEqual(served['PV-CODEX'], {
        kind: 'upstream',
        model: 'gpt-4o',
        host,
        note: `upstream (${host}) model of unstated size: what it is good for is what its model card says`,
      });
      assert.equal(
        served['PV-TURBO']?.note,
        'local model of unstated size: what it is good for is what its model card says; PV-TURBO and PV-STANDARD run it',
      );
      assert.doesNotMatch(list.text, /sk-never-shown|hunter2|operator/);
    });
  });

  it("on the default routing and scripts/setup's SmolLM2, says all four tiers run one small model", () => {
    const served = servedBy(resolveRouting({}), 'SmolLM2-135M-Instruct.Q4_1');
    for (const model of CHAT_MODELS) {
      assert.deepEqual(served[model as keyof typeof served], {
        kind: 'local',
        model: 'SmolLM2-135M-Instruct.Q4_1',
        host: null,
        note: 'local small model (135M parameters): short answers, simple tasks; PV-TURBO, PV-STANDARD, PV-ADVANCED and PV-CODEX all run it',
      });
    }
    // No local model yet: said so, with what to do.
    assert.match(
      servedBy(resolveRouting({}), undefined)['PV-TURBO'].note,
      /no local model installed yet: run scripts\/setup/,
    );
  });

  it('reads the size a model name states, in its usual spellings', () => {
    assert.equal(statedParameters('SmolLM2-135M-Instruct.Q4_1'), 135e6);
    assert.equal(statedParameters('qwen2.5:7b'), 7e9);
    assert.equal(statedParameters('qwen2.5-coder:1.5b'), 1.5e9);
    assert.equal(statedParameters('meta-llama/Llama-3.1-70B-Instruct'), 70e9);
    assert.equal(statedParameters('stories260K'), undefined);
    assert.equal(statedParameters('Phi-3-mini-128k-instruct'), undefined);
    assert.equal(statedParameters('gpt-4o'), undefined);
    assert.equal(statedParameters('mistral-7b-v0.3'), 7e9);
  });
});
