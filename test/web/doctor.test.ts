import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { checkWebSearch, DOCTOR_WEB_QUERY } from '../../src/setup/index.js';
import { type LocalServer, listen } from './pages.js';

describe('pvai doctor: web search (one real query to the configured provider)', () => {
  let searx: LocalServer;
  let tavily: LocalServer;
  before(async () => {
    searx = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname.startsWith('/nojson')) {
        res.statusCode = 403;
        res.end('Forbidden');
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results: [{ url: 'https://example.org/', title: 'Example', content: 'x' }] }));
    });
    tavily = await listen((_req, res) => {
      res.statusCode = 401;
      res.end('{"detail":{"error":"Unauthorized: missing or invalid API key."}}');
    });
  });
  after(async () => {
    await searx.close();
    await tavily.close();
  });

  const check = (env: Record<string, string>) => checkWebSearch(loadConfig(env), env);

  it('reads the PVAI_WEB_* variables into the configuration', () => {
    const config = loadConfig({
      PVAI_WEB_SEARCH_PROVIDER: 'SearXNG',
      PVAI_WEB_SEARCH_URL: 'http://127.0.0.1:8888',
      PVAI_WEB_FETCH_ALLOW: 'http://127.0.0.1:8089, 10.0.0.0/8',
    });
    assert.equal(config.web.searchProvider, 'searxng');
    assert.equal(config.web.searchUrl, 'http://127.0.0.1:8888');
    assert.deepEqual(config.web.fetchAllow, ['http://127.0.0.1:8089', '10.0.0.0/8']);
    assert.throws(() => loadConfig({ PVAI_WEB_SEARCH_PROVIDER: 'google' }), /web\.searchProvider/);
    for (const bad of ['http://127.0.0.1:8089/path', '127.0.0.1/33', 'localhost', 'ftp://x', '10.0.0.0/8/1']) {
      assert.throws(() => loadConfig({ PVAI_WEB_FETCH_ALLOW: bad }), /web\.fetchAllow\.0: each entry must be/, bad);
    }
    assert.deepEqual(
      loadConfig({ PVAI_WEB_FETCH_ALLOW: 'https://searx.internal, fd00::/8,192.168.1.7' }).web.fetchAllow,
      ['https://searx.internal', 'fd00::/8', '192.168.1.7'],
    );
  });

  it('a working SearXNG: ok, with what it answered', async () => {
    const result = await check({ PVAI_WEB_SEARCH_PROVIDER: 'searxng', PVAI_WEB_SEARCH_URL: searx.url });
    assert.equal(result.ok, true, result.detail);
    assert.match(result.detail, /searxng answered "open source software" with 1 result/);
    assert.ok(
      searx.seen.some(
        (s) =>
          s.path.includes('format=json') && s.path.includes(encodeURIComponent(DOCTOR_WEB_QUERY).replace(/%20/g, '+')),
      ),
    );
  });

  it('a SearXNG without JSON: FAIL naming search.formats', async () => {
    const result = await check({ PVAI_WEB_SEARCH_PROVIDER: 'searxng', PVAI_WEB_SEARCH_URL: `${searx.url}/nojson` });
    assert.equal(result.ok, false);
    assert.match(result.detail, /403.*search\.formats/);
    assert.match(result.fix ?? '', /search\.formats/);
  });

  it('a refused key: FAIL pointing at PVAI_WEB_SEARCH_API_KEY; nothing configured: ok (optional)', async () => {
    const refused = await check({
      PVAI_WEB_SEARCH_PROVIDER: 'tavily',
      PVAI_WEB_SEARCH_URL: `${tavily.url}/search`,
      PVAI_WEB_SEARCH_API_KEY: 'tvly-wrong',
    });
    assert.equal(refused.ok, false);
    assert.match(refused.fix ?? '', /PVAI_WEB_SEARCH_API_KEY/);
    const none = await check({});
    assert.equal(none.ok, true);
    assert.match(none.detail, /not configured/);
  });
});
