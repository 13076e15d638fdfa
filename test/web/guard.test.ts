import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nonPublicReason } from '../../src/web/address-policy.js';
import { FetchGuard, PageFetcher, type Resolver } from '../../src/web/index.js';
import { articlePage, type LocalServer, listen } from './pages.js';

describe('address policy', () => {
  it('refuses every non-public range and lets public addresses through', () => {
    const blocked = [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '224.0.0.251',
      '255.255.255.255',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '::127.0.0.1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'ff02::1',
    ];
    for (const address of blocked) assert.ok(nonPublicReason(address), `${address} is refused`);
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111']) {
      assert.equal(nonPublicReason(address), undefined, `${address} is public`);
    }
    assert.ok(nonPublicReason('not-an-ip'));
  });
});

describe('SSRF guard and page fetcher (real HTTP)', () => {
  let pages: LocalServer;
  let secret: LocalServer;
  let fetcher: PageFetcher;
  let guard: FetchGuard;
  const resolverCalls: string[] = [];
  const resolve: Resolver = async (host) => {
    resolverCalls.push(host);
    if (host === 'mixed.test')
      return [
        { address: '93.184.216.34', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ];
    if (host === 'pinned.test' || host === 'cidr.test') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'v6only.test') return [{ address: '::1', family: 6 }];
    if (host === 'localhost') return [{ address: '127.0.0.1', family: 4 }];
    if (host === 'hang.test') return new Promise(() => {});
    throw new Error(`ENOTFOUND ${host}`);
  };

  before(async () => {
    secret = await listen((_req, res) => res.end('cloud credentials'));
    pages = await listen((req, res, self) => {
      const path = req.url ?? '/';
      if (path === '/normal') {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(articlePage('Normal page', 'The walrus count is 42.'));
      } else if (path === '/huge') {
        res.setHeader('content-type', 'text/html');
        res.end(articlePage('Huge page', 'Huge fact.', 4096));
      } else if (path === '/slow') {
        const timer = setTimeout(() => res.end('<p>late</p>'), 10_000);
        res.on('close', () => clearTimeout(timer));
      } else if (path === '/endless') {
        res.setHeader('content-type', 'text/html');
        const timer = setInterval(() => res.write('<p>more and more</p>'.repeat(50)), 5);
        res.on('close', () => clearInterval(timer));
      } else if (path === '/to-private') {
        res.writeHead(302, { location: `http://127.0.0.1:${secret.port}/secret` });
        res.end();
      } else if (path === '/to-decimal') {
        res.writeHead(301, { location: `http://2130706433:${secret.port}/secret` });
        res.end();
      } else if (path === '/to-metadata') {
        res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' });
        res.end();
      } else if (path === '/to-allowed') {
        res.writeHead(302, { location: '/normal' });
        res.end();
      } else if (path === '/loop') {
        res.writeHead(302, { location: '/loop' });
        res.end();
      } else if (path === '/image') {
        res.setHeader('content-type', 'image/png');
        res.end(Buffer.alloc(100));
      } else if (path === '/gzip') {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.end(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
      } else if (path === '/missing') {
        res.statusCode = 404;
        res.end('nope');
      } else {
        res.setHeader('content-type', 'text/plain');
        res.end(`plain ${self.port}`);
      }
    });
    guard = new FetchGuard({
      allow: [pages.url, `http://pinned.test:${pages.port}`],
      // The secret server's port is an allowed port: the address rule, not the port rule, must refuse it.
      allowPorts: [secret.port],
      resolve,
    });
    fetcher = new PageFetcher(guard, { pageMs: 500, totalMs: 1500, maxBytes: 256 * 1024 });
  });
  after(async () => {
    await pages.close();
    await secret.close();
  });

  it('fetches an allowlisted page', async () => {
    const page = await fetcher.fetchPage(`${pages.url}/normal`);
    assert.ok(page.ok, JSON.stringify(page));
    assert.equal(page.kind, 'html');
    assert.match(page.body.toString(), /walrus count is 42/);
  });

  it('refuses loopback in every spelling, and the target sees no request', async () => {
    const p = secret.port;
    const spellings = [
      `http://127.0.0.1:${p}/`,
      `http://2130706433:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://0x7f.0.0.1:${p}/`,
      `http://0x7f000001:${p}/`,
      `http://127.1:${p}/`,
      `http://017700000001:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://[::ffff:7f00:1]:${p}/`,
      `http://[0:0:0:0:0:ffff:7f00:0001]:${p}/`,
      `http://localhost:${p}/`,
      `http://v6only.test:${p}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/',
      'http://0.0.0.0/',
    ];
    for (const url of spellings) {
      const page = await fetcher.fetchPage(url);
      assert.equal(page.ok, false, url);
      assert.ok(!page.ok && page.blocked, `${url} is blocked by the guard: ${JSON.stringify(page)}`);
    }
    assert.deepEqual(secret.seen, []);
  });

  it('refuses a DNS answer with one private address among public ones', async () => {
    const page = await fetcher.fetchPage(`http://mixed.test:${secret.port}/`);
    assert.ok(!page.ok && page.blocked);
    assert.match(!page.ok ? page.reason : '', /127\.0\.0\.1/);
    assert.deepEqual(secret.seen, []);
  });

  it('refuses other schemes, credentials and ports that are not allowed', async () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'gopher://127.0.0.1:70/',
      'http://user:pw@example.com/',
      'http://93.184.216.34:22/',
      `http://127.0.0.1:${pages.port + 1}/`,
    ]) {
      const page = await fetcher.fetchPage(url);
      assert.ok(!page.ok && page.blocked, url);
    }
  });

  it('re-checks every redirect hop: private and metadata targets are refused, the target sees nothing', async () => {
    for (const path of ['/to-private', '/to-decimal', '/to-metadata']) {
      const page = await fetcher.fetchPage(`${pages.url}${path}`);
      assert.ok(!page.ok && page.blocked, `${path}: ${JSON.stringify(page)}`);
    }
    assert.deepEqual(secret.seen, []);
  });

  it('follows a redirect to an allowed page and stops redirect loops', async () => {
    const page = await fetcher.fetchPage(`${pages.url}/to-allowed`);
    assert.ok(page.ok);
    assert.equal(page.finalUrl, `${pages.url}/normal`);
    const loop = await fetcher.fetchPage(`${pages.url}/loop`);
    assert.ok(!loop.ok && /redirects/.test(loop.reason));
  });

  it('connects to the address the guard checked (one DNS lookup, Host header kept)', async () => {
    resolverCalls.length = 0;
    const before = pages.seen.length;
    const page = await fetcher.fetchPage(`http://pinned.test:${pages.port}/normal`);
    assert.ok(page.ok, JSON.stringify(page));
    assert.deepEqual(resolverCalls, ['pinned.test']);
    assert.equal(pages.seen[before]?.host, `pinned.test:${pages.port}`);
  });

  it('an allowlisted CIDR permits its addresses on allowed ports only', async () => {
    const cidr = new PageFetcher(new FetchGuard({ allow: ['127.0.0.1/32'], allowPorts: [pages.port], resolve }));
    assert.ok((await cidr.fetchPage(`http://cidr.test:${pages.port}/normal`)).ok);
    const otherPort = await cidr.fetchPage(`http://cidr.test:${secret.port}/`);
    assert.ok(!otherPort.ok && otherPort.blocked);
    assert.deepEqual(secret.seen, []);
  });

  it('caps the size of huge and never-ending pages', async () => {
    const huge = await fetcher.fetchPage(`${pages.url}/huge`);
    assert.ok(huge.ok && huge.truncated && huge.body.length === 256 * 1024);
    const endless = await fetcher.fetchPage(`${pages.url}/endless`);
    // Either the size cap or the page deadline ends it; it never hangs.
    assert.ok(endless.ok ? endless.truncated : /took over/.test(endless.reason), JSON.stringify(endless));
  });

  it('gives up on a slow page after its budget, and refuses other types and HTTP errors', async () => {
    const started = performance.now();
    const slow = await fetcher.fetchPage(`${pages.url}/slow`);
    assert.ok(!slow.ok && !slow.blocked && /took over 500 ms/.test(slow.reason), JSON.stringify(slow));
    assert.ok(performance.now() - started < 5000);
    const image = await fetcher.fetchPage(`${pages.url}/image`);
    assert.ok(!image.ok && /image\/png/.test(image.reason));
    const missing = await fetcher.fetchPage(`${pages.url}/missing`);
    assert.ok(!missing.ok && /404/.test(missing.reason));
  });

  it('a DNS lookup that never answers ends with the page budget; a compressed body that was not asked for is refused', async () => {
    const started = performance.now();
    const hung = await fetcher.fetchPage('http://hang.test/');
    assert.ok(!hung.ok && /took over 500 ms/.test(hung.reason), JSON.stringify(hung));
    assert.ok(performance.now() - started < 5000);
    const gzip = await fetcher.fetchPage(`${pages.url}/gzip`);
    assert.ok(!gzip.ok && /content encoding gzip/.test(gzip.reason));
  });

  it('keeps the whole fetch step within its total budget', async () => {
    const slowFetcher = new PageFetcher(guard, { pageMs: 5000, totalMs: 400, concurrency: 2 });
    const started = performance.now();
    const results = await slowFetcher.fetchAll(Array.from({ length: 6 }, () => `${pages.url}/slow`));
    const took = performance.now() - started;
    assert.equal(results.length, 6);
    assert.ok(results.every((r) => !r.ok));
    assert.ok(took < 3000, `took ${took} ms`);
  });
});
