import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FetchGuard, PageFetcher, type Resolver } from '../../src/web/index.js';

let openssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  openssl = false;
}

describe('https pages over the pinned connection', { skip: !openssl && 'openssl is not installed' }, () => {
  let server: Server;
  let port: number;
  let cert: Buffer;
  const hosts: Array<string | undefined> = [];

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pvai-web-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=pinned.test',
        '-addext',
        'subjectAltName=DNS:pinned.test',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      hosts.push(req.headers.host);
      res.setHeader('content-type', 'text/plain');
      res.end('secure walrus facts');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const resolve: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

  it('connects to the checked address and verifies the certificate against the URL host', async () => {
    const fetcher = new PageFetcher(
      new FetchGuard({ allow: [`https://pinned.test:${port}`], resolve }),
      {},
      { ca: cert },
    );
    const page = await fetcher.fetchPage(`https://pinned.test:${port}/`);
    assert.ok(page.ok, JSON.stringify(page));
    assert.equal(page.body.toString(), 'secure walrus facts');
    assert.equal(hosts.at(-1), `pinned.test:${port}`);
  });

  it('refuses a certificate for another name, and one from an unknown authority', async () => {
    const other: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const wrongName = new PageFetcher(
      new FetchGuard({ allow: [`https://other.test:${port}`], resolve: other }),
      {},
      { ca: cert },
    );
    const misnamed = await wrongName.fetchPage(`https://other.test:${port}/`);
    assert.ok(!misnamed.ok && !misnamed.blocked, JSON.stringify(misnamed));
    const untrusted = new PageFetcher(new FetchGuard({ allow: [`https://pinned.test:${port}`], resolve }));
    const unknown = await untrusted.fetchPage(`https://pinned.test:${port}/`);
    assert.ok(!unknown.ok && !unknown.blocked, JSON.stringify(unknown));
  });
});
