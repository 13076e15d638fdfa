import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { loadConfig, type RawConfig } from '../../src/config/index.js';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { ROOT } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/server.js';

const TIERS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'];

/** The README's routing recipe: its first YAML block that starts with `routing:`, as written. */
function readmeRecipe(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').find((b) => /^routing:/.test(b));
  assert.ok(block, 'README.md has no ```yaml block starting with routing:');
  return block;
}

/**
 * The README's five-line recipe, applied as written (issue 57): its lines parsed out of README.md, so that this
 * test breaks when they change, with one substitution, the Ollama address for the mock upstream's (a real
 * OpenAI-wire server on loopback). All four tiers are then answered by the upstream, and `/z1/models` says so.
 */
for (const backend of backends()) {
  describe(`the README's routing recipe, against a mock upstream (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    let dir: string;
    const recipe = readmeRecipe();

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'From the upstream.' });
      const addresses = new Set([...recipe.matchAll(/baseUrl: "?([^",}\s]+)/g)].map((m) => m[1]));
      assert.equal(addresses.size, 1, `one upstream address in the recipe: ${[...addresses].join(', ')}`);
      const [readmeAddress] = addresses;
      dir = mkdtempSync(join(tmpdir(), 'pvai-recipe-'));
      const file = join(dir, 'pvai.yaml');
      writeFileSync(file, recipe.replaceAll(readmeAddress as string, upstream.url));
      // As the service reads it: PVAI_CONFIG=pvai.yaml.
      const loaded = loadConfig({ PVAI_CONFIG: file });
      const raw = parseYaml(readFileSync(file, 'utf8')) as RawConfig;
      assert.deepEqual(Object.keys(raw), ['routing'], 'the recipe sets routing alone');
      assert.deepEqual(Object.keys(loaded.routing), TIERS);
      server = await startTestServer(backend, { config: raw });
      ({ apiKey } = await server.createAccount('enterprise', 1000));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('has five lines: routing, then one per tier', () => {
      const lines = recipe.trimEnd().split('\n');
      assert.equal(lines.length, 5);
      assert.deepEqual(
        lines.slice(1).map((line) => line.trim().split(':')[0]),
        TIERS,
      );
    });

    it('sends every tier to the upstream, with the model the recipe names for it', async () => {
      const named = (parseYaml(recipe) as { routing: Record<string, Array<{ model: string }>> }).routing;
      for (const tier of TIERS) {
        const res = await server.request<{ model: string; choices: Array<{ message: { content: string } }> }>(
          'POST',
          '/z1/chat/completions',
          { apiKey, body: { model: tier, user_id: 'u1', messages: [{ role: 'user', content: `hello ${tier}` }] } },
        );
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.model, tier);
        assert.equal(res.body.choices[0]?.message.content, 'From the upstream.');
        assert.equal(upstream.requests.at(-1)?.model, named[tier]?.[0]?.model);
      }
      assert.equal(upstream.requests.length, 4);
    });

    it('has /z1/models say the upstream serves all four', async () => {
      const list = await server.request<{
        data: Array<{ id: string; served_by: { kind: string; model: string; host: string | null } }>;
      }>('GET', '/z1/models', { apiKey });
      const host = new URL(upstream.url).host;
      for (const tier of TIERS) {
        const served = list.body.data.find((m) => m.id === tier)?.served_by;
        assert.equal(served?.kind, 'upstream', tier);
        assert.equal(served?.host, host, tier);
      }
    });
  });
}
