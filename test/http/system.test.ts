import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('unauthenticated endpoints', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.close());

  it('answers liveness and readiness', async () => {
    const health = await server.request('GET', '/z1/health');
    // The package's version and the interface's, apart (issue 57: 2.0.0 was reported as the server's version).
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.deepEqual(health.body, { status: 'ok', version: pkg.version, interface_version: '2.0.0' });
    assert.notEqual(pkg.version, '2.0.0');
    const ready = await server.request<{ status: string; checks: Record<string, { ok: boolean }> }>(
      'GET',
      '/z1/health/ready',
    );
    assert.equal(ready.status, 200);
    assert.equal(ready.body.status, 'ready');
    assert.equal(ready.body.checks.database?.ok, true);
  });

  it('serves the contract document itself, as YAML and JSON', async () => {
    const yaml = await server.request('GET', '/openapi.yaml');
    assert.equal(yaml.status, 200);
    assert.equal(yaml.text, readFileSync(join(ROOT, 'openapi', 'openapi.yaml'), 'utf8'));
    const json = await server.request<{ openapi: string; info: { version: string }; paths: object }>(
      'GET',
      '/openapi.json',
    );
    assert.equal(json.body.openapi, '3.0.3');
    assert.equal(json.body.info.version, '2.0.0');
    assert.ok('/z1/chat/completions' in json.body.paths);
  });

  it("names as its server the one it is served from, so 'Try it out' and clients reach this server", async () => {
    const json = await server.request<{
      servers: Array<{ url: string; variables?: Record<string, { default: string }> }>;
    }>('GET', '/openapi.json');
    const [self, alternate] = json.body.servers;
    assert.equal(self?.url, '/');
    // Swagger UI and schemathesis resolve a relative server against the document's own address.
    const base = new URL(self?.url ?? '', `${server.url}/openapi.json`);
    assert.equal(base.origin, new URL(server.url).origin);
    assert.equal((await fetch(new URL('z1/health', base))).status, 200);
    assert.equal(alternate?.url, '{alt_base_url}', 'the second production address stays a documented variable');
    assert.ok(alternate?.variables?.alt_base_url?.default);
  });

  it('serves a reference page and its assets without any CDN', async () => {
    const page = await server.request('GET', '/docs');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assert.ok(!/https?:\/\//.test(page.text.replace(/<!doctype html>/i, '')), 'no external URLs');
    const js = await fetch(`${server.url}/docs/assets/swagger-ui-bundle.js`);
    assert.equal(js.status, 200);
    assert.ok((await js.text()).length > 100_000);
  });

  it('echoes a sane X-Request-Id and makes one otherwise', async () => {
    const given = await server.request('GET', '/z1/health', { headers: { 'X-Request-Id': 'abc-123' } });
    assert.equal(given.headers.get('x-request-id'), 'abc-123');
    const made = await server.request('GET', '/z1/health', { headers: { 'X-Request-Id': 'bad id with spaces' } });
    assert.match(made.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
  });

  it('makes a distinct id for every request, past the 256 its random pool holds at once', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const res = await server.request('GET', '/z1/health');
      const id = res.headers.get('x-request-id') ?? '';
      assert.match(id, /^req_[0-9a-f]{32}$/);
      ids.add(id);
    }
    assert.equal(ids.size, 600);
  });

  it('answers JSON with its type and the exact length of the bytes it sends', async () => {
    const res = await fetch(`${server.url}/z1/health`);
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(Number(res.headers.get('content-length')), bytes.length);
    assert.equal(typeof JSON.parse(bytes.toString('utf8')), 'object');
  });
});
